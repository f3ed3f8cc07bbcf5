// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The C ABI of libibat (include/ibat.h): thin shims over Session and the protocol codec. No C++
// exception crosses this boundary.
#include "client/include/ibat.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "client/convert.h"
#include "client/session.h"
#include "client/table_client.h"
#include "protocol/messages.h"

struct ibat_handle {
  std::unique_ptr<ibat::client::Session> session;
  std::unique_ptr<ibat::client::TableClient> table;  // the daemon's shared path table, if usable
};

namespace {

using ibat::client::Session;
namespace protocol = ibat::protocol;
namespace core = ibat::core;

// Extra time the library waits beyond a request's own deadline before giving up on the daemon.
constexpr int kDaemonGraceMs = 5000;
// Used when a request leaves the deadline to the daemon (its default is 5 s, configurable).
constexpr int kDefaultWaitMs = 60000;

template <class F>
int guarded(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return IBAT_ENOMEM;
  } catch (...) {
    return IBAT_EPROTO;
  }
}

using ResolveDone = std::function<void(std::uint32_t id, int status, const ibat_path* path)>;

// Turns one RESOLVE reply frame (or a local failure) into the completion's arguments; `explain`,
// when not null, gets the reply's origin and cache key.
void complete_resolve(std::uint32_t id, int status, const protocol::FrameHeader* header,
                      std::span<const std::uint8_t> payload, const ResolveDone& done,
                      ibat_path_explain* explain = nullptr) {
  if (!header) return done(id, status, nullptr);
  if (header->op == protocol::reply_op(protocol::Op::error)) return done(id, status, nullptr);
  if (header->op != protocol::reply_op(protocol::Op::resolve)) return done(id, IBAT_EPROTO, nullptr);
  if (header->status != protocol::Status::ok && payload.empty()) return done(id, status, nullptr);
  auto decoded = protocol::decode_resolve_reply(header->status, payload);
  if (!decoded) return done(id, IBAT_EPROTO, nullptr);
  const core::ResolveResult& result = decoded.value();
  ibat_path path = ibat::client::to_c_path(result);
  std::memcpy(path.record, payload.data(), sizeof path.record);
  if (explain) {
    *explain = ibat_path_explain{};
    explain->origin = static_cast<std::uint32_t>(result.origin);
    if (result.key_qos_fields & core::QosKey::kServiceId) {
      explain->key_fields |= IBAT_KEY_SERVICE_ID;
      explain->key_service_id = result.path.service_id;
    }
    if (result.key_qos_fields & core::QosKey::kQosClass) {
      explain->key_fields |= IBAT_KEY_QOS_CLASS;
      explain->key_qos_class = result.path.qos_class;
    }
  }
  done(id, IBAT_OK, &path);
}

// Sends the shared-table hits counted so far (TABLE_HITS, not tracked), if any.
void report_table_hits(ibat_t* h) {
  if (!h->table || !h->table->has_report()) return;
  protocol::TableHits report = h->table->take_report();
  h->session->send([&](std::vector<std::uint8_t>& out,
                       std::uint32_t id) { protocol::append_table_hits(out, id, report); },
                   {}, false, nullptr);
}

// The handle answers from a shared table: it maps one and its connection to the daemon (which
// hears of the hits) is up.
bool has_table(const ibat_t* h) { return h && h->table && h->session->connected(); }

// A resolve answered from the shared table; the hits are reported once a batch is due. Inlined
// into its callers: a table hit is then one call from the application (docs/performance.md).
[[gnu::always_inline]] inline bool table_hit(ibat_t* h, const ibat_target* target, const ibat_resolve_opts* opts,
                                             ibat_path& out) {
  if (!target || !has_table(h) || !h->table->resolve(*target, opts, out)) return false;
  if (h->table->report_due()) report_table_hits(h);
  return true;
}

int send_resolve(ibat_t* h, const ibat_target* target, const ibat_resolve_opts* opts, ResolveDone done,
                 std::uint32_t* id, ibat_path_explain* explain = nullptr) {
  if (!h || !target) return IBAT_EARG;
  report_table_hits(h);
  auto request = ibat::client::to_request(*target, opts);
  if (!request) return IBAT_EARG;
  return h->session->send(
      [&](std::vector<std::uint8_t>& out, std::uint32_t rid) { protocol::append_resolve_request(out, rid, *request); },
      [done = std::move(done), explain](std::uint32_t rid, int status, const protocol::FrameHeader* header,
                                        std::span<const std::uint8_t> payload) {
        complete_resolve(rid, status, header, payload, done, explain);
      },
      false, id);
}

using OkPayload = std::function<int(std::span<const std::uint8_t>)>;

// Sends a request answered by one frame (or an error) and waits for it; `on_ok`, if given, reads
// the payload of an ok reply and returns the status.
int simple_request(ibat_t* h, const std::function<void(std::vector<std::uint8_t>&, std::uint32_t)>& encode,
                   const OkPayload& on_ok = {}) {
  if (!h) return IBAT_EARG;
  bool done = false;
  int result = IBAT_EPROTO;
  int rc = h->session->send(encode,
                            [&](std::uint32_t, int status, const protocol::FrameHeader*,
                                std::span<const std::uint8_t> payload) {
                              done = true;
                              result = status == IBAT_OK && on_ok ? on_ok(payload) : status;
                            },
                            false, nullptr);
  if (rc != IBAT_OK) return rc;
  rc = h->session->wait([&] { return done; });
  return done ? result : rc;
}

void send_cancel(ibat_t* h, std::uint32_t id) {
  h->session->send([&](std::vector<std::uint8_t>& out,
                       std::uint32_t cid) { protocol::append_cancel(out, cid, protocol::CancelRequest{id}); },
                   {}, false, nullptr);
}

int copy_text(const std::string& text, char* buf, std::size_t len) {
  if (!buf || len <= text.size()) return IBAT_EARG;
  std::memcpy(buf, text.c_str(), text.size() + 1);
  return IBAT_OK;
}

}  // namespace

extern "C" {

const char* ibat_default_socket(void) {
  const char* env = std::getenv("IBAT_SOCKET");
  return env && *env ? env : IBAT_DEFAULT_SOCKET;
}

int ibat_open(const char* socket_path, ibat_t** out) {
  if (!out) return IBAT_EARG;
  *out = nullptr;
  return guarded([&] {
    const std::string path = socket_path ? socket_path : ibat_default_socket();
    auto session = Session::connect(path);
    if (!session) return static_cast<int>(IBAT_ECONNECT);
    auto table = ibat::client::TableClient::open(path, session->fd());
    *out = new ibat_handle{std::move(session), std::move(table)};
    return static_cast<int>(IBAT_OK);
  });
}

void ibat_close(ibat_t* h) {
  if (!h) return;
  guarded([&] {
    report_table_hits(h);
    h->session->fail_all(IBAT_ECANCELLED);
    return 0;
  });
  delete h;
}

namespace {

// ibat_resolve_sync through the socket: out of line, so that a table hit does not pay for its frame.
[[gnu::noinline]] int resolve_sync_through_socket(ibat_t* h, const ibat_target* target, const ibat_resolve_opts* opts,
                                                  ibat_path* out, ibat_path_explain* explain = nullptr) {
  bool done = false;
  int result = IBAT_EPROTO;
  std::uint32_t id = 0;
  int rc = send_resolve(h, target, opts,
                        [&](std::uint32_t, int status, const ibat_path* path) {
                          done = true;
                          result = status;
                          if (path) *out = *path;
                        },
                        &id, explain);
  if (rc != IBAT_OK) return rc;
  std::uint32_t own_ms = opts && opts->timeout_ms ? std::min<std::uint32_t>(opts->timeout_ms, 3'600'000) : 0;
  int wait_ms = (own_ms ? static_cast<int>(own_ms) : kDefaultWaitMs) + kDaemonGraceMs;
  rc = h->session->wait([&] { return done; }, wait_ms);
  if (done) return result;
  if (rc == IBAT_ETIMEOUT) {
    h->session->forget(id);
    send_cancel(h, id);
  }
  return rc;
}

}  // namespace

int ibat_resolve_sync(ibat_t* h, const ibat_target* target, const ibat_resolve_opts* opts, ibat_path* out) {
  if (!out) return IBAT_EARG;
  return guarded([&] {
    if (table_hit(h, target, opts, *out)) return static_cast<int>(IBAT_OK);
    return resolve_sync_through_socket(h, target, opts, out);
  });
}

int ibat_resolve_explain(ibat_t* h, const ibat_target* target, const ibat_resolve_opts* opts, ibat_path* out,
                         ibat_path_explain* explain) {
  if (!out) return IBAT_EARG;
  return guarded([&] {
    // The reply is written only when it comes: a request that times out leaves *explain alone.
    ibat_path_explain got{};
    int rc = resolve_sync_through_socket(h, target, opts, out, &got);
    if (rc == IBAT_OK && explain) *explain = got;
    return rc;
  });
}

size_t ibat_resolve_table(ibat_t* h, const ibat_target* targets, size_t n, const ibat_resolve_opts* opts,
                          ibat_path* out, unsigned char* hit) {
  if (!targets || !out || !hit) return 0;
  std::size_t hits = 0;
  guarded([&] {
    if (!has_table(h)) {
      std::memset(hit, 0, n);
      return static_cast<int>(IBAT_OK);
    }
    hits = h->table->resolve_batch(targets, n, opts, out, hit);
    if (hits != 0 && h->table->report_due()) report_table_hits(h);
    return static_cast<int>(IBAT_OK);
  });
  return hits;
}

int ibat_resolve_async(ibat_t* h, const ibat_target* target, const ibat_resolve_opts* opts,
                       ibat_resolve_cb callback, void* user_data, uint32_t* request_id) {
  if (!callback) return IBAT_EARG;
  return guarded([&] {
    ibat_path hit;
    if (table_hit(h, target, opts, hit)) {
      std::uint32_t id = h->session->take_id();
      if (request_id) *request_id = id;
      callback(user_data, id, IBAT_OK, &hit);
      return static_cast<int>(IBAT_OK);
    }
    return send_resolve(
        h, target, opts,
        [callback, user_data](std::uint32_t id, int status, const ibat_path* path) {
          callback(user_data, id, status, path);
        },
        request_id);
  });
}

int ibat_fd(const ibat_t* h) { return h ? h->session->fd() : -1; }

int ibat_process(ibat_t* h) {
  if (!h) return IBAT_EARG;
  return guarded([&] {
    report_table_hits(h);
    return h->session->process();
  });
}

int ibat_cancel(ibat_t* h, uint32_t request_id) {
  if (!h) return IBAT_EARG;
  return guarded([&] {
    if (!h->session->is_pending(request_id)) return static_cast<int>(IBAT_EARG);
    return h->session->send([&](std::vector<std::uint8_t>& out, std::uint32_t cid) {
      protocol::append_cancel(out, cid, protocol::CancelRequest{request_id});
    }, {}, false, nullptr);
  });
}

size_t ibat_pending(const ibat_t* h) { return h ? h->session->pending() : 0; }

int ibat_neigh_add(ibat_t* h, const ibat_target* ip, const uint8_t hw[20], uint16_t source_lid) {
  if (!ip || !hw) return IBAT_EARG;
  return guarded([&] {
    auto addr = ibat::client::to_ip(*ip);
    if (!addr) return static_cast<int>(IBAT_EARG);
    protocol::NeighAdd req{*addr, core::HwAddr{}, std::nullopt};
    std::memcpy(req.hw.raw.data(), hw, req.hw.raw.size());
    if (source_lid) req.slid = core::Lid{source_lid};
    return simple_request(h, [&](std::vector<std::uint8_t>& out, std::uint32_t id) {
      protocol::append_neigh_add(out, id, req);
    });
  });
}

int ibat_neigh_del(ibat_t* h, const ibat_target* ip) {
  if (!ip) return IBAT_EARG;
  return guarded([&] {
    auto addr = ibat::client::to_ip(*ip);
    if (!addr) return static_cast<int>(IBAT_EARG);
    return simple_request(h, [&](std::vector<std::uint8_t>& out, std::uint32_t id) {
      protocol::append_neigh_del(out, id, protocol::NeighDel{*addr});
    });
  });
}

int ibat_flush(ibat_t* h, const ibat_gid* dgid, uint16_t pkey) { return ibat_flush_count(h, dgid, pkey, nullptr); }

int ibat_flush_count(ibat_t* h, const ibat_gid* dgid, uint16_t pkey, uint32_t* dropped) {
  return ibat_flush_port(h, nullptr, dgid, pkey, dropped);
}

int ibat_flush_port(ibat_t* h, const ibat_gid* sgid, const ibat_gid* dgid, uint16_t pkey, uint32_t* dropped) {
  if (dropped) *dropped = UINT32_MAX;
  return guarded([&] {
    protocol::FlushRequest req;
    if (sgid) req.sgid = core::Gid{std::to_array(sgid->raw)};
    if (dgid) req.dgid = core::Gid{std::to_array(dgid->raw)};
    if (dgid && pkey) req.pkey = core::Pkey{pkey};
    return simple_request(
        h, [&](std::vector<std::uint8_t>& out, std::uint32_t id) { protocol::append_flush(out, id, req); },
        [&](std::span<const std::uint8_t> payload) {
          auto count = protocol::decode_flush_reply(payload);
          if (!count) return static_cast<int>(IBAT_EPROTO);
          if (dropped && count.value()) *dropped = *count.value();
          return static_cast<int>(IBAT_OK);
        });
  });
}

namespace {

// Sends one listing request and collects its chunked reply body.
int fetch_body(ibat_t* h, const std::function<void(std::vector<std::uint8_t>&, std::uint32_t)>& request,
               std::string& body) {
  bool done = false;
  int result = IBAT_EPROTO;
  int rc = h->session->send(
      request,
      [&](std::uint32_t, int status, const protocol::FrameHeader* header, std::span<const std::uint8_t> payload) {
        if (header && status == IBAT_OK) body.append(payload.begin(), payload.end());
        if (!header || !header->more() || status != IBAT_OK) {
          done = true;
          result = status;
        }
      },
      true, nullptr);
  if (rc != IBAT_OK) return rc;
  rc = h->session->wait([&] { return done; });
  return done ? result : rc;
}

// PATHS comes a page at a time (docs/protocol.md): asks for every page and joins their arrays.
int fetch_all_paths(ibat_t* h, std::string& json) {
  json = "[";
  std::uint32_t cursor = 0;
  do {
    std::string body;
    int rc = fetch_body(h, [&](std::vector<std::uint8_t>& out, std::uint32_t id) {
      protocol::append_paths_request(out, id, protocol::PathsRequest{cursor, 0});
    }, body);
    if (rc != IBAT_OK) return rc;
    auto page = protocol::decode_paths_reply(std::span(reinterpret_cast<const std::uint8_t*>(body.data()), body.size()));
    if (!page) return IBAT_EPROTO;
    const std::string& array = page.value().json;
    if (array.size() < 2 || array.front() != '[' || array.back() != ']') return IBAT_EPROTO;
    if (array.size() > 2) json.append(json.size() > 1 ? "," : "").append(array, 1, array.size() - 2);
    if (page.value().next != 0 && page.value().next <= cursor) return IBAT_EPROTO;  // must move on
    cursor = page.value().next;
  } while (cursor != 0);
  json += "]";
  return IBAT_OK;
}

}  // namespace

int ibat_query_json(ibat_t* h, int listing, char** json_out) {
  if (!h || !json_out) return IBAT_EARG;
  if (listing != IBAT_LIST_PATHS && listing != IBAT_LIST_STATS && listing != IBAT_LIST_NEIGH) return IBAT_EARG;
  *json_out = nullptr;
  return guarded([&] {
    auto op = static_cast<protocol::Op>(listing);
    std::string body;
    int result = op == protocol::Op::paths
                     ? fetch_all_paths(h, body)
                     : fetch_body(h, [&](std::vector<std::uint8_t>& out, std::uint32_t id) {
                         protocol::append_empty_request(out, id, op);
                       }, body);
    if (result != IBAT_OK) return result;
    char* copy = static_cast<char*>(std::malloc(body.size() + 1));
    if (!copy) return static_cast<int>(IBAT_ENOMEM);
    std::memcpy(copy, body.c_str(), body.size() + 1);
    *json_out = copy;
    return static_cast<int>(IBAT_OK);
  });
}

void ibat_free(void* p) { std::free(p); }

int ibat_watch(ibat_t* h, ibat_event_cb on_event, void* user_data) {
  if (!h || !on_event) return IBAT_EARG;
  return guarded([&] {
    bool stopped = false, ended = false;
    int result = IBAT_OK;
    std::string event;
    std::uint32_t id = 0;
    int rc = h->session->send(
        [&](std::vector<std::uint8_t>& out, std::uint32_t wid) {
          protocol::append_empty_request(out, wid, protocol::Op::watch);
        },
        [&](std::uint32_t, int status, const protocol::FrameHeader* header, std::span<const std::uint8_t> payload) {
          if (header && status == IBAT_OK && !payload.empty() && !stopped) {
            event.assign(payload.begin(), payload.end());
            stopped = on_event(user_data, event.c_str()) != 0;
          }
          if (!header || !header->more() || status != IBAT_OK) {
            ended = true;
            result = status;
          }
        },
        true, &id);
    if (rc != IBAT_OK) return rc;
    rc = h->session->wait([&] { return stopped || ended; });
    if (stopped && !ended) {
      h->session->forget(id);
      send_cancel(h, id);
      return static_cast<int>(IBAT_OK);
    }
    return ended ? result : rc;
  });
}

const char* ibat_last_message(const ibat_t* h) { return h ? h->session->last_message().c_str() : ""; }

const char* ibat_strerror(int status) {
  switch (status) {
    case IBAT_OK: return "success";
    case IBAT_ETIMEOUT: return "timed out waiting for the subnet administrator";
    case IBAT_EUNREACHABLE: return "destination unreachable (out of service, port down, or no neighbour entry)";
    case IBAT_ENORECORD: return "the subnet administrator has no path to the destination";
    case IBAT_EOVERLOADED: return "ibatd is overloaded; retry later";
    case IBAT_ECANCELLED: return "request cancelled";
    case IBAT_EINVALID: return "invalid request (zero GID, bad P_Key or LID)";
    case IBAT_EDENIED: return "permission denied (needs root or the ibatd admin group)";
    case IBAT_EMALFORMED: return "ibatd could not parse the request";
    case IBAT_EUNSUPPORTED: return "operation or protocol version not supported by ibatd";
    case IBAT_ECONNECT: return "cannot connect to ibatd";
    case IBAT_EDISCONNECTED: return "connection to ibatd lost";
    case IBAT_EARG: return "invalid argument";
    case IBAT_ENOMEM: return "out of memory";
    case IBAT_EPROTO: return "ibatd sent a reply this library cannot parse";
    default: return "unknown ibat status";
  }
}

int ibat_parse_gid(const char* text, ibat_gid* out) {
  if (!text || !out) return IBAT_EARG;
  auto gid = core::Gid::parse(text);
  if (!gid) return IBAT_EARG;
  std::copy(gid->raw.begin(), gid->raw.end(), out->raw);
  return IBAT_OK;
}

int ibat_parse_ip(const char* text, ibat_target* out) {
  if (!text || !out) return IBAT_EARG;
  auto ip = core::IpAddr::parse(text);
  if (!ip) return IBAT_EARG;
  *out = ibat::client::to_c_target(*ip);
  return IBAT_OK;
}

int ibat_parse_hw(const char* text, ibat_target* out) {
  if (!text || !out) return IBAT_EARG;
  auto hw = core::HwAddr::parse(text);
  if (!hw) return IBAT_EARG;
  *out = ibat::client::to_c_target(*hw);
  return IBAT_OK;
}

int ibat_parse_lid(const char* text, ibat_target* out) {
  if (!text || !out) return IBAT_EARG;
  auto lid = core::Lid::parse(text);
  if (!lid || !lid->is_valid_unicast()) return IBAT_EARG;
  *out = ibat::client::to_c_target(*lid);
  return IBAT_OK;
}

int ibat_parse_target(const char* text, ibat_target* out) {
  if (!text || !out) return IBAT_EARG;
  if (ibat_parse_hw(text, out) == IBAT_OK || ibat_parse_lid(text, out) == IBAT_OK) return IBAT_OK;
  auto ip = core::IpAddr::parse(text);
  if (ip && ip->v4) {
    *out = ibat::client::to_c_target(*ip);
    return IBAT_OK;
  }
  ibat_gid gid;
  if (ibat_parse_gid(text, &gid) != IBAT_OK) return IBAT_EARG;
  *out = ibat_target{};
  out->type = IBAT_TARGET_GID;
  out->u.gid = gid;
  return IBAT_OK;
}

int ibat_format_gid(const ibat_gid* gid, char* buf, size_t len) {
  if (!gid) return IBAT_EARG;
  return guarded([&] { return copy_text(core::Gid{std::to_array(gid->raw)}.to_string(), buf, len); });
}

int ibat_format_target(const ibat_target* target, char* buf, size_t len) {
  if (!target) return IBAT_EARG;
  return guarded([&] {
    auto t = ibat::client::to_core_target(*target);
    if (!t) return static_cast<int>(IBAT_EARG);
    std::string text = std::visit([](const auto& v) { return v.to_string(); }, *t);
    return copy_text(text, buf, len);
  });
}

uint32_t ibat_mtu_bytes(uint8_t mtu_code) { return core::mtu_bytes(mtu_code).value_or(0); }
double ibat_rate_gbps(uint8_t rate_code) { return core::rate_gbps(rate_code).value_or(0.0); }

}  // extern "C"
