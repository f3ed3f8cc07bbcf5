// BusyPoll's counters and the event loop that polls while a BusyPoll window is open (busy_poll.h).
#include "server/daemon/busy_poll.h"

namespace ibat::server {

void BusyPoll::arm(Clock::time_point now) {
  if (!enabled()) return;
  kernel::feed(spin_, now, sampler_);
  if (spin_.may_spin()) until_ = now + window_;
}

void BusyPoll::count_spell(Clock::duration spent, bool caught) {
  ++counters_.spells;
  if (caught) ++counters_.caught;
  polled_ += spent;
  counters_.polled_us = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(polled_).count());
}

void run_loop(asio::io_context& loop) {
  using Clock = BusyPoll::Clock;
  BusyPoll& busy = asio::use_service<BusyPoll>(loop);
  while (!loop.stopped()) {
    if (!busy.polling(Clock::now())) {
      loop.run_one();  // sleeps in epoll_wait until a handler is ready
      continue;
    }
    // Poll: run what is ready without sleeping, until work comes or the window closes.
    const Clock::time_point start = Clock::now();
    Clock::time_point now = start;
    std::size_t ran = 0;
    while (ran == 0 && !loop.stopped() && busy.polling(now)) {
      ran = loop.poll();
      now = Clock::now();
    }
    busy.count_spell(now - start, ran > 0);
  }
}

}  // namespace ibat::server
