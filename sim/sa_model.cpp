// SA server model: see sa_model.h.
#include "sim/sa_model.h"

#include <algorithm>
#include <cmath>

namespace ibat::sim {

SaModel::SaModel(const SaOptions& options, TimeSeries& series)
    : options_(options),
      series_(series),
      service_ns_(std::max<std::int64_t>(1, std::llround(1e9 / options.rate_per_s))) {}

void SaModel::add_outage(std::int64_t from_ns, std::int64_t to_ns) {
  outages_.emplace_back(from_ns, to_ns);
  std::sort(outages_.begin(), outages_.end());
}

const std::pair<std::int64_t, std::int64_t>* SaModel::outage_at_or_after(std::int64_t t) const {
  for (const auto& o : outages_) {
    if (o.second > t) return &o;
  }
  return nullptr;
}

std::optional<std::int64_t> SaModel::submit(std::int64_t sent_ns) {
  const std::int64_t arrival = sent_ns + options_.latency_ns;
  ++totals_.arrived;
  series_.add_sa_arrival(arrival);
  while (!waiting_.empty() && waiting_.front().start_ns <= arrival) {
    last_started_ = waiting_.front();
    waiting_.pop_front();
  }
  const std::size_t in_sa = waiting_.size() + (last_started_.finish_ns > arrival ? 1 : 0);
  // OpenSM's sa_mad_ctrl_rcv_callback: more than one message queued and the last one dispatched
  // had waited beyond max_msg_fifo_timeout.
  const bool overloaded = options_.fifo_timeout_ns > 0 && waiting_.size() > 1 &&
                          last_started_.wait_ns > options_.fifo_timeout_ns;
  const bool full = options_.queue_limit > 0 && in_sa >= options_.queue_limit;

  const auto* outage = outage_at_or_after(arrival);
  const bool down = outage != nullptr && outage->first <= arrival;
  if (down || overloaded || full) {
    ++totals_.dropped;
    if (!down) ++totals_.overload_dropped;
    series_.add_sa_drop(arrival);
    return std::nullopt;
  }
  const std::int64_t start = std::max(last_finish_ns_, arrival);
  const std::int64_t finish = start + service_ns_;
  if (outage != nullptr && finish > outage->first) {
    // Queued when the SM went away: lost with it. The server restarts idle after the outage.
    ++totals_.dropped;
    series_.add_sa_drop(arrival);
    return std::nullopt;
  }
  last_finish_ns_ = finish;
  waiting_.push_back(Accepted{start, finish, start - arrival});
  totals_.max_wait_ns = std::max(totals_.max_wait_ns, start - arrival);
  series_.add_sa_wait(start, start - arrival);
  ++totals_.served;
  series_.add_sa_served(finish);
  return finish + options_.latency_ns;
}

}  // namespace ibat::sim
