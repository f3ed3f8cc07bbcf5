// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Policy::validate: checks every tunable against its accepted range and names the bad field.
#include <cmath>
#include <string>

#include "core/policy.h"

namespace ibat::core {
namespace {

std::string ms_text(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

}  // namespace

std::string_view to_string(Prefetch p) { return p == Prefetch::subnet ? "subnet" : "off"; }

std::optional<Prefetch> prefetch_from_string(std::string_view s) {
  if (s == "subnet") return Prefetch::subnet;
  if (s == "off") return Prefetch::off;
  return std::nullopt;
}

std::string Policy::validate() const {
  if (path_ttl <= Duration::zero()) return "path_ttl must be > 0 (got " + ms_text(path_ttl) + ")";
  if (!std::isfinite(revalidate_per_s) || revalidate_per_s <= 0 || revalidate_per_s > 1e6)
    return "revalidate_per_s must be in (0, 1000000] (got " + std::to_string(revalidate_per_s) + ")";
  if (revalidate_jitter < Duration::zero())
    return "revalidate_jitter must be >= 0 (got " + ms_text(revalidate_jitter) + ")";
  if (sa_max_inflight < 1 || sa_max_inflight > 65'535)
    return "sa_max_inflight must be in [1, 65535] (got " + std::to_string(sa_max_inflight) + ")";
  if (!std::isfinite(sa_rate) || sa_rate <= 0 || sa_rate > 1e6)
    return "sa_rate must be in (0, 1000000] (got " + std::to_string(sa_rate) + ")";
  if (sa_burst < 1 || sa_burst > 1'000'000)
    return "sa_burst must be in [1, 1000000] (got " + std::to_string(sa_burst) + ")";
  if (retry_base <= Duration::zero()) return "retry_base must be > 0 (got " + ms_text(retry_base) + ")";
  if (retry_max < retry_base)
    return "retry_max must be >= retry_base (" + ms_text(retry_base) + ") (got " + ms_text(retry_max) + ")";
  if (retry_count > 32) return "retry_count must be in [0, 32] (got " + std::to_string(retry_count) + ")";
  if (!std::isfinite(retry_jitter) || retry_jitter < 0 || retry_jitter >= 1)
    return "retry_jitter must be in [0, 1) (got " + std::to_string(retry_jitter) + ")";
  if (negative_ttl < Duration::zero())
    return "negative_ttl must be >= 0 (got " + ms_text(negative_ttl) + ")";
  if (capacity < 1 || capacity > 0x7FFF'FFFF)
    return "capacity must be in [1, 2147483647] (got " + std::to_string(capacity) + ")";
  if (max_waiters_per_key < 1)
    return "max_waiters_per_key must be >= 1 (got " + std::to_string(max_waiters_per_key) + ")";
  if (max_pending < 1) return "max_pending must be >= 1 (got " + std::to_string(max_pending) + ")";
  if (request_timeout <= Duration::zero())
    return "request_timeout must be > 0 (got " + ms_text(request_timeout) + ")";
  if (max_request_timeout < request_timeout)
    return "max_request_timeout must be >= request_timeout (" + ms_text(request_timeout) + ") (got " +
           ms_text(max_request_timeout) + ")";
  if (provisional_ttl < Duration::zero())
    return "provisional_ttl must be >= 0 (got " + ms_text(provisional_ttl) + ")";
  if (!std::isfinite(in_use_window_paths_per_s) || in_use_window_paths_per_s < 0 ||
      (in_use_window_paths_per_s > 0 && in_use_window_paths_per_s < 1000) || in_use_window_paths_per_s > 1e9)
    return "in_use_window_paths_per_s must be 0 or in [1000, 1000000000] (got " +
           std::to_string(in_use_window_paths_per_s) + ")";
  if (expected_subnet_ports > 10'000'000)
    return "expected_subnet_ports must be in [0, 10000000] (got " + std::to_string(expected_subnet_ports) + ")";
  if (!default_pkey.is_valid())
    return "default_pkey must have a non-zero base in [0x0001, 0x7fff] (got " + default_pkey.to_string() + ")";
  for (const IdRange& r : qos_service_ids) {
    if (r.lo > r.hi) return "qos_service_ids: range " + to_string(r, true) + " ends before it starts";
  }
  for (const IdRange& r : qos_classes) {
    if (r.lo > r.hi || r.hi > kMaxQosClass)
      return "qos_classes: " + to_string(r, false) + " is not a range of 12-bit QoS classes (0-4095)";
  }
  return {};
}

}  // namespace ibat::core
