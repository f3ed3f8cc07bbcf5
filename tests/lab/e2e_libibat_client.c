// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
/* e2e.libibat: a C program linking libibat, run against a real ibatd on the lab by
 * e2e_libibat.sh. Checks a synchronous resolve, then pipelined asynchronous resolves (fd + poll +
 * ibat_process): every request completes exactly once, known GIDs with the DLID saquery gives,
 * the unknown GID with IBAT_ENORECORD; and the STATS listing over the same handle.
 * Usage: e2e_libibat_client SOCKET UNKNOWN_GID GID=DLID...   Exit 0 when every check passes. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibat.h"

#define MAX_DESTS 64
#define REPEATS 8 /* asynchronous requests per destination, all pipelined at once */

struct dest {
  ibat_target target;
  const char* text;
  unsigned expected_dlid; /* 0: the unknown GID, which must fail with IBAT_ENORECORD */
};

struct request {
  const struct dest* dest;
  unsigned completions;
  int status;
  unsigned dlid;
};

static int failures;

static void check(int ok, const char* what, const char* detail) {
  if (ok) {
    printf("ok: %s\n", what);
  } else {
    printf("FAIL: %s (%s)\n", what, detail);
    ++failures;
  }
}

static void on_resolved(void* user, uint32_t request_id, int status, const ibat_path* path) {
  struct request* r = user;
  (void)request_id;
  ++r->completions;
  r->status = status;
  r->dlid = (status == IBAT_OK && path) ? path->dlid : 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_dest(const char* arg, struct dest* d) {
  static char buf[MAX_DESTS][64];
  static int used;
  char* eq;
  if (used >= MAX_DESTS || strlen(arg) >= sizeof buf[0]) return -1;
  strcpy(buf[used], arg);
  d->text = buf[used++];
  eq = strchr(buf[used - 1], '=');
  d->expected_dlid = 0;
  if (eq) {
    *eq = '\0';
    d->expected_dlid = (unsigned)strtoul(eq + 1, NULL, 10);
  }
  return ibat_parse_target(d->text, &d->target) == IBAT_OK ? 0 : -1;
}

int main(int argc, char** argv) {
  struct dest dests[MAX_DESTS];
  static struct request requests[MAX_DESTS * REPEATS];
  char detail[256];
  int ndests = 0, nrequests = 0, i, rc, bad;
  ibat_t* h = NULL;
  ibat_path path;
  char* json = NULL;
  double deadline;

  if (argc < 4 || argc - 2 > MAX_DESTS) {
    fprintf(stderr, "usage: %s SOCKET UNKNOWN_GID GID=DLID...\n", argv[0]);
    return 2;
  }
  for (i = 2; i < argc; ++i) {
    if (parse_dest(argv[i], &dests[ndests++]) != 0) {
      fprintf(stderr, "bad destination '%s'\n", argv[i]);
      return 2;
    }
  }
  rc = ibat_open(argv[1], &h);
  snprintf(detail, sizeof detail, "%s", ibat_strerror(rc));
  check(rc == IBAT_OK, "ibat_open", detail);
  if (rc != IBAT_OK) return 1;

  /* synchronous: the first known destination */
  memset(&path, 0, sizeof path);
  rc = ibat_resolve_sync(h, &dests[1].target, NULL, &path);
  snprintf(detail, sizeof detail, "status %s, dlid %u, expected %u", ibat_strerror(rc), path.dlid,
           dests[1].expected_dlid);
  check(rc == IBAT_OK && path.dlid == dests[1].expected_dlid &&
            memcmp(path.dgid.raw, dests[1].target.u.gid.raw, 16) == 0 && path.slid != 0 &&
            ibat_mtu_bytes(path.mtu) != 0 && ibat_rate_gbps(path.rate) > 0,
        "ibat_resolve_sync: DLID as saquery, DGID echoed, valid SLID/MTU/rate", detail);
  memset(&path, 0, sizeof path);
  rc = ibat_resolve_sync(h, &dests[0].target, NULL, &path);
  snprintf(detail, sizeof detail, "status %s", ibat_strerror(rc));
  check(rc == IBAT_ENORECORD, "ibat_resolve_sync of the unknown GID: IBAT_ENORECORD", detail);

  /* asynchronous: REPEATS requests per destination, all in flight together */
  for (int rep = 0; rep < REPEATS; ++rep) {
    for (i = 0; i < ndests; ++i) {
      struct request* r = &requests[nrequests++];
      r->dest = &dests[i];
      rc = ibat_resolve_async(h, &dests[i].target, NULL, on_resolved, r, NULL);
      if (rc != IBAT_OK) {
        snprintf(detail, sizeof detail, "%s: %s", dests[i].text, ibat_strerror(rc));
        check(0, "ibat_resolve_async accepted", detail);
        return 1;
      }
    }
  }
  deadline = now_s() + 20;
  while (ibat_pending(h) > 0 && now_s() < deadline) {
    struct pollfd pfd = {ibat_fd(h), POLLIN, 0};
    if (poll(&pfd, 1, 1000) > 0 && ibat_process(h) != IBAT_OK) break;
  }
  snprintf(detail, sizeof detail, "%zu still pending", ibat_pending(h));
  check(ibat_pending(h) == 0, "every asynchronous request answered", detail);
  bad = 0;
  for (i = 0; i < nrequests; ++i) {
    const struct request* r = &requests[i];
    int want_ok = r->dest->expected_dlid != 0;
    int good = r->completions == 1 &&
               (want_ok ? (r->status == IBAT_OK && r->dlid == r->dest->expected_dlid) : r->status == IBAT_ENORECORD);
    if (!good && bad++ < 5) {
      snprintf(detail, sizeof detail, "%s: %u completions, status %s, dlid %u (expected %u)", r->dest->text,
               r->completions, ibat_strerror(r->status), r->dlid, r->dest->expected_dlid);
      check(0, "asynchronous request", detail);
    }
  }
  snprintf(detail, sizeof detail, "%d of %d wrong", bad, nrequests);
  check(bad == 0, "asynchronous: each request completed once, DLIDs as saquery, unknown GID no-record", detail);

  /* the STATS listing over the same handle */
  rc = ibat_query_json(h, IBAT_LIST_STATS, &json);
  snprintf(detail, sizeof detail, "status %s", ibat_strerror(rc));
  check(rc == IBAT_OK && json && strstr(json, "\"resolves\"") != NULL, "ibat_query_json(STATS)", detail);
  ibat_free(json);
  ibat_close(h);
  printf("%d requests checked, %d failure(s)\n", nrequests + 2, failures);
  return failures == 0 ? 0 : 1;
}
