// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
/* libibat: C client of ibatd, the InfiniBand path resolution daemon (native protocol v1,
 * docs/protocol.md). Stable ABI: an opaque handle, plain C structs, int status codes.
 *
 * A handle is one connection. It is not thread-safe: use it from one thread at a time (or one
 * handle per thread). Requests may be pipelined; replies come back in any order.
 *
 *   ibat_t* h;
 *   if (ibat_open(NULL, &h) != IBAT_OK) { perror("ibat_open"); ... }
 *   ibat_target t;  ibat_parse_target("fe80::2:c903:a:1", &t);
 *   ibat_path p;
 *   int rc = ibat_resolve_sync(h, &t, NULL, &p);   // rc: IBAT_OK or an IBAT_E* code
 *   ibat_close(h);
 */
#ifndef IBAT_H
#define IBAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IBAT_DEFAULT_SOCKET "/run/ibat/ibatd.sock"

/* Status codes. 1..9 are the daemon's protocol statuses; 20+ are local to the library. */
enum ibat_status {
  IBAT_OK = 0,
  IBAT_ETIMEOUT = 1,      /* no SA answer within the request's deadline */
  IBAT_EUNREACHABLE = 2,  /* destination out of service, port down, or no neighbour entry for the IP */
  IBAT_ENORECORD = 3,     /* the SA has no path to the destination */
  IBAT_EOVERLOADED = 4,   /* a daemon or library cap was hit; retry later */
  IBAT_ECANCELLED = 5,    /* cancelled by ibat_cancel or by daemon shutdown */
  IBAT_EINVALID = 6,      /* the daemon refused the values (zero GID, bad P_Key, LID 0) */
  IBAT_EDENIED = 7,       /* privileged operation: peer is not root or in the configured group */
  IBAT_EMALFORMED = 8,    /* the daemon could not parse what this library sent */
  IBAT_EUNSUPPORTED = 9,  /* the daemon does not know this operation or protocol version */
  IBAT_ECONNECT = 20,     /* cannot connect to the socket (errno says why) */
  IBAT_EDISCONNECTED = 21,/* the connection was closed or broke; pending requests failed with this */
  IBAT_EARG = 22,         /* bad argument to a library function */
  IBAT_ENOMEM = 23,       /* out of memory */
  IBAT_EPROTO = 24        /* the daemon sent a reply this library cannot parse */
};

typedef struct ibat_handle ibat_t; /* opaque connection handle */

typedef struct ibat_gid {
  uint8_t raw[16]; /* network byte order */
} ibat_gid;

enum ibat_target_type {
  IBAT_TARGET_GID = 1,
  IBAT_TARGET_LID = 2,
  IBAT_TARGET_IPV4 = 3,
  IBAT_TARGET_IPV6 = 4,
  IBAT_TARGET_HW = 5 /* 20-byte IPoIB hardware address */
};

typedef struct ibat_target {
  uint32_t type; /* enum ibat_target_type */
  union {
    ibat_gid gid;
    uint16_t lid;      /* host byte order */
    uint8_t ipv4[4];   /* network byte order */
    uint8_t ipv6[16];
    uint8_t hw[20];
    uint8_t reserved[32];
  } u;
} ibat_target;

enum ibat_resolve_flags {
  IBAT_RESOLVE_CACHE_ONLY = 1u << 0, /* never query the SA; a miss fails with IBAT_ENORECORD */
  IBAT_RESOLVE_FORCE_SA = 1u << 1,   /* ignore the cache, wait for a fresh SA answer */
  IBAT_RESOLVE_SGID = 1u << 2,       /* sgid below is set (default: the local port GID) */
  IBAT_RESOLVE_PKEY = 1u << 3,       /* pkey below is set (default: the daemon's default P_Key) */
  /* What the SM's QoS policy may answer by (as the kernel asks for rdma_cm): the daemon asks the
   * SA with them when its qos_service_ids / qos_classes name them, else the default path serves.
   * A resolve with any of them is never answered from the shared table. */
  IBAT_RESOLVE_SERVICE_ID = 1u << 4, /* service_id_hi/lo below are set */
  IBAT_RESOLVE_QOS_CLASS = 1u << 5,  /* qos_class below is set (12 bits) */
  IBAT_RESOLVE_TCLASS = 1u << 6      /* tclass below is set: echoed in the path */
};

typedef struct ibat_resolve_opts {
  uint32_t flags;      /* enum ibat_resolve_flags */
  uint32_t timeout_ms; /* 0: the daemon's default */
  uint16_t pkey;
  uint16_t reserved0;
  ibat_gid sgid;
  uint16_t qos_class;
  uint8_t tclass;
  uint8_t reserved1;       /* zero */
  uint32_t service_id_hi;  /* the ServiceID's upper 32 bits (ibat_opts_set_service_id) */
  uint32_t service_id_lo;
  uint8_t reserved[12];    /* zero */
} ibat_resolve_opts;

/* Sets the ServiceID of a resolve and its flag. */
static inline void ibat_opts_set_service_id(ibat_resolve_opts* opts, uint64_t service_id) {
  opts->flags |= IBAT_RESOLVE_SERVICE_ID;
  opts->service_id_hi = (uint32_t)(service_id >> 32);
  opts->service_id_lo = (uint32_t)service_id;
}

enum ibat_path_state { IBAT_STATE_VALID = 1, IBAT_STATE_STALE = 2, IBAT_STATE_PROVISIONAL = 3 };

/* A resolved path. Never has DLID 0, SLID 0, or an unknown MTU/rate code. */
typedef struct ibat_path {
  ibat_gid dgid;
  ibat_gid sgid;
  uint16_t dlid; /* host byte order */
  uint16_t slid;
  uint16_t pkey;
  uint8_t sl;
  uint8_t mtu;      /* IBA MTU code: 1=256 .. 5=4096 bytes */
  uint8_t rate;     /* IBA static rate code (see ibat_rate_gbps) */
  uint8_t pkt_life; /* IBA code: 4.096 us * 2^code */
  uint8_t hop_limit;
  uint8_t tclass;
  uint32_t flow_label;
  uint32_t state;  /* enum ibat_path_state */
  uint32_t age_ms; /* time since the SA (or ARP) produced this path */
  uint8_t record[64]; /* the PathRecord in IBA wire format, as the SA sent it */
} ibat_path;

/* Where ibatd's cached path came from (ibat_resolve_explain). The values are the protocol's. */
enum ibat_path_origin {
  IBAT_ORIGIN_UNKNOWN = 0,    /* an ibatd too old to say */
  IBAT_ORIGIN_SA_TABLE = 1,   /* the port's subnet PathRecord GetTable (prefetch, after an SM change) */
  IBAT_ORIGIN_SA_GET = 2,     /* a single PathRecord GET (a miss, a revalidation, force-SA) */
  IBAT_ORIGIN_WARM_CACHE = 3, /* the warm cache file ibatd read at start, not revalidated since */
  IBAT_ORIGIN_NEIGHBOUR = 4   /* built from an ARP / neighbour source LID: a provisional path */
};
/* What ibatd keys a cached path by beyond (SGID, DGID, P_Key): ibat_path_explain.key_fields. */
enum ibat_key_fields { IBAT_KEY_SERVICE_ID = 1u << 0, IBAT_KEY_QOS_CLASS = 1u << 1 };

/* Where a resolved path came from: ibat_resolve_explain. Its age is the path's age_ms. */
typedef struct ibat_path_explain {
  uint32_t origin;         /* enum ibat_path_origin */
  uint32_t key_fields;     /* enum ibat_key_fields; 0: the destination's default path */
  uint64_t key_service_id; /* with IBAT_KEY_SERVICE_ID */
  uint16_t key_qos_class;  /* with IBAT_KEY_QOS_CLASS */
  uint8_t reserved[14];    /* zero */
} ibat_path_explain;

/* Socket used when ibat_open gets NULL: $IBAT_SOCKET if set and non-empty, else IBAT_DEFAULT_SOCKET. */
const char* ibat_default_socket(void);

/* Connects. On IBAT_ECONNECT, errno holds the reason (ENOENT: no such socket, ECONNREFUSED ...).
 * When ibatd publishes its shared path table (SOCKET.table, docs/shared-table.md) the handle maps
 * it read-only and answers GID resolves that hit a valid path from it, without the socket;
 * IBAT_SHARED_TABLE=0 in the environment turns that off. */
int ibat_open(const char* socket_path, ibat_t** out);
/* Closes the connection. Pending asynchronous requests get IBAT_ECANCELLED first. Not from a callback. */
void ibat_close(ibat_t* h);

/* Resolves and waits. Replies to other pending requests that arrive meanwhile are dispatched. */
int ibat_resolve_sync(ibat_t* h, const ibat_target* target, const ibat_resolve_opts* opts, ibat_path* out);

/* ibat_resolve_sync that always asks ibatd through the socket (never the shared table) and also
 * says where the path came from and under which cache key (explain may be NULL). */
int ibat_resolve_explain(ibat_t* h, const ibat_target* target, const ibat_resolve_opts* opts, ibat_path* out,
                         ibat_path_explain* explain);

/* Answers from the shared path table, without the socket, the GID resolves among targets[0..n)
 * that hit a valid path there: out[i] is filled and hit[i] set to 1 for those, hit[i] set to 0
 * (out[i] untouched) for the rest, which the caller resolves with ibat_resolve_sync/_async. One
 * clock read serves the whole batch (every age_ms is as of the call). Returns the number of hits;
 * 0 for all when the handle has no table (IBAT_SHARED_TABLE=0, none published, or not trusted),
 * and 0 with nothing written when targets, out or hit is NULL. */
size_t ibat_resolve_table(ibat_t* h, const ibat_target* targets, size_t n, const ibat_resolve_opts* opts,
                          ibat_path* out, unsigned char* hit);

/* Completion of an asynchronous resolve: `path` is non-NULL only when status == IBAT_OK and is
 * valid during the call. Called exactly once per accepted request, from ibat_process,
 * ibat_resolve_sync, the other blocking calls, ibat_close, or ibat_resolve_async itself (when
 * the socket is full, replies are read to make room, so a request may complete right there). A callback may call
 * ibat_resolve_async and ibat_cancel (their requests are written together when the call that ran
 * the callback returns: docs/protocol.md, "Batching"); blocking calls from a callback return
 * IBAT_EARG, and it must not call ibat_close. */
typedef void (*ibat_resolve_cb)(void* user_data, uint32_t request_id, int status, const ibat_path* path);

/* Sends a resolve request and returns at once; `callback` runs later (see ibat_resolve_cb).
 * request_id (may be NULL) receives the id usable with ibat_cancel. At most 1024 requests may be
 * pending per handle; beyond that this returns IBAT_EOVERLOADED and the callback is not called. */
int ibat_resolve_async(ibat_t* h, const ibat_target* target, const ibat_resolve_opts* opts,
                       ibat_resolve_cb callback, void* user_data, uint32_t* request_id);
/* The connection's file descriptor: poll it for POLLIN, then call ibat_process. */
int ibat_fd(const ibat_t* h);
/* Reads every reply available without blocking and runs their callbacks. Returns IBAT_OK, or
 * IBAT_EDISCONNECTED once the connection is gone (every pending callback has then run). */
int ibat_process(ibat_t* h);
/* Asks the daemon to cancel a pending request; its callback then gets IBAT_ECANCELLED (or its
 * real result, if that was already on the way). IBAT_EARG if the id is not pending. */
int ibat_cancel(ibat_t* h, uint32_t request_id);
/* Number of requests sent and not yet completed. */
size_t ibat_pending(const ibat_t* h);

/* Administrative operations (blocking). neigh add/del and flush need root or the daemon's group. */
int ibat_neigh_add(ibat_t* h, const ibat_target* ip, const uint8_t hw[20], uint16_t source_lid);
int ibat_neigh_del(ibat_t* h, const ibat_target* ip);
/* dgid NULL: flush everything; pkey 0: every P_Key of dgid. */
int ibat_flush(ibat_t* h, const ibat_gid* dgid, uint16_t pkey);
/* ibat_flush that also reports how many cache entries were dropped in *dropped (if not NULL);
 * UINT32_MAX when the daemon is too old to say. */
int ibat_flush_count(ibat_t* h, const ibat_gid* dgid, uint16_t pkey, uint32_t* dropped);
/* ibat_flush_count of one port of a multi-port host: only the paths from source GID *sgid (the
 * port's GID, see `ibat ports`); dgid NULL: every destination. A GID no port has: IBAT_EINVALID. */
int ibat_flush_port(ibat_t* h, const ibat_gid* sgid, const ibat_gid* dgid, uint16_t pkey, uint32_t* dropped);

enum ibat_listing { IBAT_LIST_PATHS = 5, IBAT_LIST_STATS = 6, IBAT_LIST_NEIGH = 4 };
/* Fetches a JSON document (docs/protocol.md "JSON bodies"); free *json_out with ibat_free. */
int ibat_query_json(ibat_t* h, int listing, char** json_out);
void ibat_free(void* p);

/* Streams daemon events: `on_event` gets each JSON event object (NUL-terminated) until it
 * returns non-zero (then ibat_watch returns IBAT_OK) or the connection ends. */
typedef int (*ibat_event_cb)(void* user_data, const char* json_event);
int ibat_watch(ibat_t* h, ibat_event_cb on_event, void* user_data);

/* The daemon's message from its last ERROR reply on this handle, or "" if none. */
const char* ibat_last_message(const ibat_t* h);
/* A short English description of a status code. Never NULL. */
const char* ibat_strerror(int status);

/* Text helpers; return IBAT_OK or IBAT_EARG. */
int ibat_parse_gid(const char* text, ibat_gid* out);     /* "fe80::2:c903:a:1" */
int ibat_parse_ip(const char* text, ibat_target* out);   /* IPv4 or IPv6 */
int ibat_parse_hw(const char* text, ibat_target* out);   /* 20 colon-separated hex bytes */
int ibat_parse_lid(const char* text, ibat_target* out);  /* decimal or 0x-hex, 1..0xBFFF */
/* Guesses the kind: a hardware address (20 hex bytes), a dotted IPv4 address, a LID (decimal or
 * 0x-hex), else a GID. IPv6 text is taken as a GID; use ibat_parse_ip for IPv6 neighbours. */
int ibat_parse_target(const char* text, ibat_target* out);
/* Writes the text form into buf (at least 46 bytes for a GID, 60 for a hardware address). */
int ibat_format_gid(const ibat_gid* gid, char* buf, size_t len);
int ibat_format_target(const ibat_target* target, char* buf, size_t len);
/* MTU in bytes and rate in Gb/s of a path's codes; 0 if the code is unknown. */
uint32_t ibat_mtu_bytes(uint8_t mtu_code);
double ibat_rate_gbps(uint8_t rate_code);

#ifdef __cplusplus
}
#endif

#endif /* IBAT_H */
