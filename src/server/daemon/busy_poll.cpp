// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// BusyPoll's window and counters, and the event loop that polls while the window is open (busy_poll.h).
#include "server/daemon/busy_poll.h"

namespace ibat::server {

void BusyPoll::arm(Clock::time_point now) {
  if (!enabled()) return;
  kernel::feed(spin_, now, sampler_);
  if (spin_.may_spin()) until_ = now + window_;
}

void BusyPoll::end_spell(Clock::duration idle, bool caught) {
  if (caught) ++counters_.caught;
  counters_.polled += idle;
}

void run_loop(asio::io_context& loop) {
  using Clock = BusyPoll::Clock;
  BusyPoll& busy = asio::use_service<BusyPoll>(loop);
  while (!loop.stopped()) {
    if (!busy.polling(Clock::now())) {
      loop.run_one();  // sleeps in epoll_wait until a handler is ready
      continue;
    }
    // Poll: run what is ready without sleeping, until work comes or the window closes. One poll()
    // runs handlers for as long as they keep coming; only the time of empty polls is counted.
    busy.begin_spell();
    Clock::time_point now = Clock::now();
    Clock::duration idle{};
    std::size_t ran = 0;
    while (!loop.stopped() && busy.polling(now)) {
      const Clock::time_point before = now;
      ran = loop.poll();
      now = Clock::now();
      if (ran > 0) break;
      idle += now - before;
    }
    busy.end_spell(idle, ran > 0);
  }
}

}  // namespace ibat::server
