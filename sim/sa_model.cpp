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
  while (!finish_times_.empty() && finish_times_.front() <= arrival) finish_times_.pop_front();

  const auto* outage = outage_at_or_after(arrival);
  const bool down = outage != nullptr && outage->first <= arrival;
  if (down || finish_times_.size() >= options_.queue_limit) {
    ++totals_.dropped;
    series_.add_sa_drop(arrival);
    return std::nullopt;
  }
  const std::int64_t finish = std::max(last_finish_ns_, arrival) + service_ns_;
  if (outage != nullptr && finish > outage->first) {
    // Queued when the SM went away: lost with it. The server restarts idle after the outage.
    ++totals_.dropped;
    series_.add_sa_drop(arrival);
    return std::nullopt;
  }
  last_finish_ns_ = finish;
  finish_times_.push_back(finish);
  ++totals_.served;
  series_.add_sa_served(finish);
  return finish + options_.latency_ns;
}

}  // namespace ibat::sim
