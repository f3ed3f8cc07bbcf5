// libibat C++ wrapper: RAII over the C handle of ibat.h, exceptions for errors, callbacks as
// std::function and std::future results. Header-only; links against libibat.so only.
//
//   ibat::Client client;                                  // $IBAT_SOCKET or /run/ibat/ibatd.sock
//   ibat_path p = client.resolve(ibat::Client::target("fe80::2:c903:a:1"));
//   auto f = client.resolve_future(ibat::Client::target("10.0.0.7"));
//   while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) client.wait_and_process();
#pragma once

#include <poll.h>

#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "ibat.h"

namespace ibat {

// A failed libibat call: status() is the ibat_status code.
class Error : public std::runtime_error {
 public:
  Error(int status, const std::string& what)
      : std::runtime_error(what + ": " + ibat_strerror(status)), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

class Client {
 public:
  using Callback = std::function<void(std::uint32_t request_id, int status, const ibat_path* path)>;

  explicit Client(const char* socket_path = nullptr) {
    ibat_t* h = nullptr;
    int rc = ibat_open(socket_path, &h);
    if (rc != IBAT_OK)
      throw Error(rc, std::string("cannot connect to ") + (socket_path ? socket_path : ibat_default_socket()));
    handle_.reset(h);
  }

  // Parses a GID, IPv4 address, LID or hardware address (see ibat_parse_target).
  static ibat_target target(const std::string& text) {
    ibat_target t{};
    int rc = ibat_parse_target(text.c_str(), &t);
    if (rc != IBAT_OK) throw Error(rc, "not a GID, IP, LID or hardware address: '" + text + "'");
    return t;
  }

  ibat_path resolve(const ibat_target& t, const ibat_resolve_opts* opts = nullptr) {
    ibat_path p{};
    check(ibat_resolve_sync(handle_.get(), &t, opts, &p), "resolve");
    return p;
  }

  // A resolved path and where ibatd's cached copy came from, under which cache key (ibat_path_explain).
  struct Explained {
    ibat_path path;
    ibat_path_explain explain;
  };

  // resolve() that always asks ibatd through the socket (never the shared table) and also says
  // where the path came from (see ibat_resolve_explain).
  Explained resolve_explain(const ibat_target& t, const ibat_resolve_opts* opts = nullptr) {
    Explained e{};
    check(ibat_resolve_explain(handle_.get(), &t, opts, &e.path, &e.explain), "resolve");
    return e;
  }

  // `done` runs exactly once, from process() / a blocking call / the destructor.
  std::uint32_t resolve_async(const ibat_target& t, Callback done, const ibat_resolve_opts* opts = nullptr) {
    auto* heap = new Callback(std::move(done));
    std::uint32_t id = 0;
    int rc = ibat_resolve_async(handle_.get(), &t, opts, &Client::trampoline, heap, &id);
    if (rc != IBAT_OK) {
      delete heap;
      throw Error(rc, "resolve");
    }
    return id;
  }

  // The future holds the path, or an ibat::Error.
  std::future<ibat_path> resolve_future(const ibat_target& t, const ibat_resolve_opts* opts = nullptr) {
    auto promise = std::make_shared<std::promise<ibat_path>>();
    auto future = promise->get_future();
    resolve_async(t, [promise](std::uint32_t, int status, const ibat_path* path) {
      if (status == IBAT_OK) promise->set_value(*path);
      else promise->set_exception(std::make_exception_ptr(Error(status, "resolve")));
    }, opts);
    return future;
  }

  int fd() const { return ibat_fd(handle_.get()); }
  // Runs the callbacks of every reply already received (never blocks).
  void process() { check(ibat_process(handle_.get()), "process"); }
  // Waits up to timeout_ms (-1: forever) for replies, then processes them.
  void wait_and_process(int timeout_ms = -1) {
    pollfd pfd{fd(), POLLIN, 0};
    if (::poll(&pfd, 1, timeout_ms) > 0) process();
  }
  void cancel(std::uint32_t request_id) { check(ibat_cancel(handle_.get(), request_id), "cancel"); }
  std::size_t pending() const { return ibat_pending(handle_.get()); }

  std::string paths_json() { return query(IBAT_LIST_PATHS); }
  std::string stats_json() { return query(IBAT_LIST_STATS); }
  std::string neighbours_json() { return query(IBAT_LIST_NEIGH); }
  void neigh_add(const ibat_target& ip, const std::uint8_t (&hw)[20], std::uint16_t source_lid = 0) {
    check(ibat_neigh_add(handle_.get(), &ip, hw, source_lid), "neigh add");
  }
  void neigh_del(const ibat_target& ip) { check(ibat_neigh_del(handle_.get(), &ip), "neigh del"); }
  void flush() { check(ibat_flush(handle_.get(), nullptr, 0), "flush"); }
  void flush(const ibat_gid& dgid, std::uint16_t pkey = 0) { check(ibat_flush(handle_.get(), &dgid, pkey), "flush"); }
  // Calls on_event for each event until it returns false.
  void watch(std::function<bool(const char* json_event)> on_event) {
    check(ibat_watch(handle_.get(), &Client::event_trampoline, &on_event), "watch");
  }

  std::string last_message() const { return ibat_last_message(handle_.get()); }
  ibat_t* get() const { return handle_.get(); }

 private:
  struct Closer {
    void operator()(ibat_t* h) const { ibat_close(h); }
  };

  void check(int rc, const char* what) const {
    if (rc == IBAT_OK) return;
    std::string message = ibat_last_message(handle_.get());
    throw Error(rc, message.empty() ? std::string(what) : std::string(what) + " (" + message + ")");
  }
  std::string query(int listing) {
    char* json = nullptr;
    check(ibat_query_json(handle_.get(), listing, &json), "query");
    std::string out(json);
    ibat_free(json);
    return out;
  }
  static void trampoline(void* user, std::uint32_t id, int status, const ibat_path* path) {
    std::unique_ptr<Callback> cb(static_cast<Callback*>(user));
    (*cb)(id, status, path);
  }
  static int event_trampoline(void* user, const char* json) {
    return (*static_cast<std::function<bool(const char*)>*>(user))(json) ? 0 : 1;
  }

  std::unique_ptr<ibat_t, Closer> handle_;
};

}  // namespace ibat
