// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-load: the load loop. Keeps `depth` requests outstanding on each connection (async API,
// poll on ibat_fd), optionally paced, reconnecting or deliberately disconnecting, and on stop
// waits (bounded) for every outstanding answer.
#pragma once

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "ibat.h"
#include "tools/load/ledger.h"
#include "tools/load/options.h"

namespace ibat::load {

struct RunCounters {
  double send_s = 0;             // time spent sending
  double total_s = 0;            // including the drain
  std::uint64_t disconnects = 0; // connections the daemon closed or that broke
  std::uint64_t reconnects = 0;  // successful reopenings after a break
  std::uint64_t client_closes = 0;  // --disconnect-every closes
};

class Runner {
 public:
  Runner(const Options& options, Ledger& ledger);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Opens every connection; on failure returns false with the reason in `error`.
  bool connect_all(std::string& error);
  // Sends until the duration or count is reached or `stop` is set, then drains.
  void run(const volatile std::sig_atomic_t& stop);
  // Closes every connection; answers still outstanding then count as abandoned.
  void close_all();
  const RunCounters& counters() const { return counters_; }

 private:
  struct Connection {
    std::string socket;
    ibat_t* handle = nullptr;
    std::uint64_t sends = 0;  // since the last (re)open
    Clock::time_point retry_at{};
  };

  bool may_send(Clock::time_point now, Clock::time_point start) const;
  bool send_one(Connection& c, Clock::time_point now);
  void process(Connection& c);
  void broken(Connection& c);
  void client_close(Connection& c);
  void try_reopen(Connection& c, Clock::time_point now);
  // Polls the open connections for up to timeout_ms and processes those with replies.
  void poll_once(int timeout_ms);
  bool any_open() const;

  const Options& options_;
  Ledger& ledger_;
  std::vector<Connection> connections_;
  std::uint64_t attempts_ = 0;
  RunCounters counters_;
};

}  // namespace ibat::load
