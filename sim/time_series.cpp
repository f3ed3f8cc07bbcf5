// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Time series of SA load and completions: see time_series.h.
#include "sim/time_series.h"

#include <algorithm>
#include <fstream>

namespace ibat::sim {

TimeSeries::Bucket& TimeSeries::at(std::int64_t t_ns) {
  const auto index = static_cast<std::size_t>(std::max<std::int64_t>(0, t_ns) / bucket_ns_);
  if (index >= buckets_.size()) buckets_.resize(index + 1);
  return buckets_[index];
}

std::vector<TimeSeries::Bucket>::const_iterator TimeSeries::from(std::int64_t t_ns) const {
  const auto index = static_cast<std::size_t>(std::max<std::int64_t>(0, t_ns) / bucket_ns_);
  return buckets_.begin() + static_cast<std::ptrdiff_t>(std::min(index, buckets_.size()));
}

double TimeSeries::peak_sa_qps(std::int64_t from_ns) const {
  std::uint64_t peak = 0;
  for (auto b = from(from_ns); b != buckets_.end(); ++b) peak = std::max(peak, b->sa_arrivals);
  return static_cast<double>(peak) * 1e9 / static_cast<double>(bucket_ns_);
}

std::uint64_t TimeSeries::buckets_waiting_over(std::int64_t limit_ns, std::int64_t from_ns) const {
  const auto over = [limit_ns](const Bucket& b) { return b.sa_max_wait_ns > limit_ns; };
  return static_cast<std::uint64_t>(std::count_if(from(from_ns), buckets_.end(), over));
}

std::int64_t TimeSeries::max_sa_wait_ns(std::int64_t from_ns) const {
  std::int64_t longest = 0;
  for (auto b = from(from_ns); b != buckets_.end(); ++b) longest = std::max(longest, b->sa_max_wait_ns);
  return longest;
}

bool TimeSeries::write_csv(const std::string& path) const {
  std::ofstream out(path);
  if (!out) return false;
  const double per_s = 1e9 / static_cast<double>(bucket_ns_);
  out << "time_s,sa_qps,sa_served_qps,sa_dropped,completions,failures,sa_max_wait_ms\n";
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    const Bucket& b = buckets_[i];
    out << static_cast<double>(i) * static_cast<double>(bucket_ns_) / 1e9 << ','
        << static_cast<double>(b.sa_arrivals) * per_s << ','
        << static_cast<double>(b.sa_served) * per_s << ',' << b.sa_dropped << ','
        << b.completions << ',' << b.failures << ','
        << static_cast<double>(b.sa_max_wait_ns) / 1e6 << '\n';
  }
  return static_cast<bool>(out);
}

}  // namespace ibat::sim
