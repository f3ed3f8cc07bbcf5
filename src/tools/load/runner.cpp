// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-load: connection handling and the send / poll / drain loop.
#include "tools/load/runner.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace ibat::load {

using std::chrono::duration;
using std::chrono::milliseconds;

namespace {
constexpr auto kReopenDelay = milliseconds(100);
constexpr int kIdlePollMs = 100;
constexpr int kBusyPollMs = 5;  // pacing or reconnecting: wake up often

double seconds_between(Clock::time_point a, Clock::time_point b) { return duration<double>(b - a).count(); }
}  // namespace

Runner::Runner(const Options& options, Ledger& ledger) : options_(options), ledger_(ledger) {
  connections_.resize(options.connections);
  for (std::size_t i = 0; i < connections_.size(); ++i)
    connections_[i].socket = options.sockets[i % options.sockets.size()];
}

Runner::~Runner() { close_all(); }

bool Runner::connect_all(std::string& error) {
  for (auto& c : connections_) {
    if (ibat_open(c.socket.c_str(), &c.handle) != IBAT_OK) {
      error = "cannot connect to " + c.socket + ": " + std::strerror(errno);
      c.handle = nullptr;
      return false;
    }
  }
  return true;
}

void Runner::close_all() {
  ledger_.set_abandoning(true);
  for (auto& c : connections_) {
    if (c.handle) ibat_close(c.handle);
    c.handle = nullptr;
  }
  ledger_.set_abandoning(false);
}

bool Runner::may_send(Clock::time_point now, Clock::time_point start) const {
  if (options_.count && attempts_ >= options_.count) return false;
  if (options_.rate > 0) return static_cast<double>(attempts_) < options_.rate * seconds_between(start, now) + 1;
  return true;
}

// Sends the next request on `c`; false when the connection cannot take more right now.
bool Runner::send_one(Connection& c, Clock::time_point now) {
  const Destination& d = options_.destinations[attempts_ % options_.destinations.size()];
  // Spread the uncached share evenly: request i bypasses the cache when floor(i * share) steps.
  auto share_step = [&](std::uint64_t i) { return std::floor(static_cast<double>(i) * options_.uncached_share); };
  bool uncached = share_step(attempts_ + 1) > share_step(attempts_);
  ++attempts_;
  ibat_resolve_opts opts{};
  opts.timeout_ms = options_.timeout_ms;
  if (uncached) opts.flags |= IBAT_RESOLVE_FORCE_SA;
  if (d.sgid) {
    opts.flags |= IBAT_RESOLVE_SGID;
    opts.sgid = *d.sgid;
  }
  Record& r = ledger_.open(now, d.dlid, uncached);
  int rc = ibat_resolve_async(c.handle, &d.target, &opts, &Ledger::on_answer, &r, nullptr);
  if (rc != IBAT_OK) {
    ledger_.refused(r, rc);
    if (rc == IBAT_EDISCONNECTED) broken(c);
    return false;
  }
  if (options_.disconnect_every && ++c.sends >= options_.disconnect_every) {
    client_close(c);
    return false;
  }
  return true;
}

void Runner::process(Connection& c) {
  if (ibat_process(c.handle) == IBAT_EDISCONNECTED) broken(c);
}

// The daemon closed the connection (libibat has already failed its pending requests).
void Runner::broken(Connection& c) {
  ++counters_.disconnects;
  ibat_close(c.handle);
  c.handle = nullptr;
  c.retry_at = Clock::now() + kReopenDelay;
}

// --disconnect-every: hang up with requests in flight, then open a new connection at once.
void Runner::client_close(Connection& c) {
  ++counters_.client_closes;
  ledger_.set_abandoning(true);
  ibat_close(c.handle);
  ledger_.set_abandoning(false);
  c.handle = nullptr;
  c.sends = 0;
  if (ibat_open(c.socket.c_str(), &c.handle) != IBAT_OK) {
    c.handle = nullptr;
    c.retry_at = Clock::now() + kReopenDelay;
  }
}

void Runner::try_reopen(Connection& c, Clock::time_point now) {
  if (now < c.retry_at) return;
  if (ibat_open(c.socket.c_str(), &c.handle) == IBAT_OK) {
    ++counters_.reconnects;
    c.sends = 0;
  } else {
    c.handle = nullptr;
    c.retry_at = now + kReopenDelay;
  }
}

bool Runner::any_open() const {
  return std::any_of(connections_.begin(), connections_.end(), [](const Connection& c) { return c.handle; });
}

void Runner::poll_once(int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<Connection*> owners;
  for (auto& c : connections_) {
    if (!c.handle) continue;
    fds.push_back(pollfd{ibat_fd(c.handle), POLLIN, 0});
    owners.push_back(&c);
  }
  int n = ::poll(fds.data(), fds.size(), timeout_ms);
  if (n <= 0) return;  // timeout, or EINTR from a stop signal: the caller re-checks
  for (std::size_t i = 0; i < fds.size(); ++i)
    if (fds[i].revents && owners[i]->handle) process(*owners[i]);
}

void Runner::run(const volatile std::sig_atomic_t& stop) {
  const Clock::time_point start = Clock::now();
  const bool timed = options_.duration_s > 0;
  const Clock::time_point end = start + std::chrono::duration_cast<Clock::duration>(duration<double>(options_.duration_s));
  for (;;) {
    Clock::time_point now = Clock::now();
    if (stop || (timed && now >= end) || (options_.count && attempts_ >= options_.count)) break;
    if (!options_.reconnect && !any_open()) break;
    bool waiting_for_time = false;
    for (auto& c : connections_) {
      if (!c.handle) {
        if (options_.reconnect) try_reopen(c, now);
        waiting_for_time = waiting_for_time || !c.handle;
        if (!c.handle) continue;
      }
      while (c.handle && ibat_pending(c.handle) < options_.depth) {
        if (!may_send(now, start)) {
          waiting_for_time = options_.rate > 0;
          break;
        }
        if (!send_one(c, now)) break;
      }
    }
    int timeout = waiting_for_time ? kBusyPollMs : kIdlePollMs;
    if (timed) {
      auto left = std::chrono::duration_cast<milliseconds>(end - Clock::now()).count();
      timeout = static_cast<int>(std::clamp<long long>(left, 0, timeout));
    }
    poll_once(timeout);
  }
  const Clock::time_point sending_done = Clock::now();
  counters_.send_s = seconds_between(start, sending_done);
  // Drain: every request still outstanding gets until the deadline to be answered.
  const Clock::time_point drain_end = sending_done + milliseconds(options_.drain_ms);
  while (ledger_.outstanding() > 0 && any_open()) {
    auto left = std::chrono::duration_cast<milliseconds>(drain_end - Clock::now()).count();
    if (left <= 0) break;
    poll_once(static_cast<int>(std::min<long long>(left, kIdlePollMs)));
  }
  counters_.total_s = seconds_between(start, Clock::now());
}

}  // namespace ibat::load
