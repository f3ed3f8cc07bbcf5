// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Per-bucket counters over virtual time (SA arrivals, answers, drops, client completions and
// failures), written by --csv and used for the peak SA query rate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ibat::sim {

class TimeSeries {
 public:
  explicit TimeSeries(std::int64_t bucket_ns) : bucket_ns_(bucket_ns) {}

  void add_sa_arrival(std::int64_t t_ns) { at(t_ns).sa_arrivals++; }
  void add_sa_served(std::int64_t t_ns) { at(t_ns).sa_served++; }
  void add_sa_drop(std::int64_t t_ns) { at(t_ns).sa_dropped++; }
  // A request taken off the SA's queue at t_ns after waiting wait_ns (the bucket keeps the max).
  void add_sa_wait(std::int64_t t_ns, std::int64_t wait_ns) {
    Bucket& b = at(t_ns);
    if (wait_ns > b.sa_max_wait_ns) b.sa_max_wait_ns = wait_ns;
  }
  void add_completions(std::int64_t t_ns, std::uint64_t ok, std::uint64_t failed) {
    Bucket& b = at(t_ns);
    b.completions += ok;
    b.failures += failed;
  }

  // Over the buckets from the one holding `from_ns` on (a run's measured window):
  // the highest SA arrival rate of a bucket, in queries per second;
  double peak_sa_qps(std::int64_t from_ns = 0) const;
  // the buckets in which some request waited in the SA's queue longer than limit_ns;
  std::uint64_t buckets_waiting_over(std::int64_t limit_ns, std::int64_t from_ns = 0) const;
  // the longest wait in the SA's queue.
  std::int64_t max_sa_wait_ns(std::int64_t from_ns = 0) const;
  // Writes "time_s,sa_qps,sa_served_qps,sa_dropped,completions,failures,sa_max_wait_ms" rows.
  // False on I/O error.
  bool write_csv(const std::string& path) const;

 private:
  struct Bucket {
    std::uint64_t sa_arrivals = 0;
    std::uint64_t sa_served = 0;
    std::uint64_t sa_dropped = 0;
    std::uint64_t completions = 0;
    std::uint64_t failures = 0;
    std::int64_t sa_max_wait_ns = 0;
  };
  Bucket& at(std::int64_t t_ns);
  std::vector<Bucket>::const_iterator from(std::int64_t t_ns) const;

  std::int64_t bucket_ns_;
  std::vector<Bucket> buckets_;
};

}  // namespace ibat::sim
