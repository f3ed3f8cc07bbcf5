// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-bench: pipelined and sequential resolve runs over libibat, with per-request timing.
#include "tools/bench/measurements.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace ibat::bench {

void RunResult::add(const RunResult& other) {
  ok += other.ok;
  failed += other.failed;
  for (const auto& [what, n] : other.errors) errors[what] += n;
  seconds += other.seconds;
  latencies_us.insert(latencies_us.end(), other.latencies_us.begin(), other.latencies_us.end());
}

namespace {

using Clock = std::chrono::steady_clock;

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

void count_outcome(RunResult& r, int status, const ibat_path* path) {
  if (status == IBAT_OK && path && path->dlid != 0) {
    ++r.ok;
    return;
  }
  ++r.failed;
  ++r.errors[status == IBAT_OK ? "path with DLID 0" : ibat_strerror(status)];
}

// One in-flight request slot of a pipelined run; user_data of its callback.
struct Slot;

struct Pipeline {
  Pipeline(ibat_t* h, const std::vector<ibat_target>& t, std::uint32_t f, bool one)
      : handle(h), targets(t), flags(f), one_per_target(one) {}

  ibat_t* handle;
  const std::vector<ibat_target>& targets;
  std::uint32_t flags;
  bool one_per_target;
  std::size_t next_target = 0;
  bool timing = true;  // false once the window closed: completions are drained, not counted
  RunResult result;
  int send_error = IBAT_OK;

  void send(Slot& slot);
};

struct Slot {
  Pipeline* pipeline;
  std::size_t index;
  Clock::time_point sent;
};

void on_reply(void* user, std::uint32_t, int status, const ibat_path* path) {
  auto& slot = *static_cast<Slot*>(user);
  Pipeline& p = *slot.pipeline;
  if (!p.timing) return;
  p.result.latencies_us.push_back(micros(Clock::now() - slot.sent));
  count_outcome(p.result, status, path);
  p.send(slot);
}

void Pipeline::send(Slot& slot) {
  const ibat_target& target = one_per_target ? targets[slot.index] : targets[next_target++ % targets.size()];
  ibat_resolve_opts opts{};
  opts.flags = flags;
  slot.sent = Clock::now();
  int rc = ibat_resolve_async(handle, &target, &opts, on_reply, &slot, nullptr);
  if (rc != IBAT_OK && send_error == IBAT_OK) send_error = rc;
}

void wait_readable(ibat_t* h) {
  pollfd pfd{ibat_fd(h), POLLIN, 0};
  ::poll(&pfd, 1, 1000);
}

}  // namespace

RunResult run_pipelined(ibat_t* h, const std::vector<ibat_target>& targets, unsigned depth,
                        std::uint32_t flags, double seconds, bool one_per_target) {
  Pipeline p(h, targets, flags, one_per_target);
  p.result.latencies_us.reserve(1 << 20);
  std::vector<Slot> slots(depth);
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  for (std::size_t i = 0; i < slots.size(); ++i) {
    slots[i] = Slot{&p, i, {}};
    p.send(slots[i]);
  }
  Clock::time_point now = start;
  while (p.send_error == IBAT_OK && (now = Clock::now()) < end) {
    wait_readable(h);
    if (ibat_process(h) != IBAT_OK) throw std::runtime_error(std::string("connection lost: ") + ibat_last_message(h));
  }
  if (p.send_error != IBAT_OK) throw std::runtime_error(std::string("resolve not sent: ") + ibat_strerror(p.send_error));
  p.timing = false;
  p.result.seconds = std::chrono::duration<double>(now - start).count();
  while (ibat_pending(h) > 0) {
    wait_readable(h);
    if (ibat_process(h) != IBAT_OK) break;
  }
  return std::move(p.result);
}

RunResult run_sequential(ibat_t* h, const std::vector<ibat_target>& targets, unsigned samples) {
  RunResult r;
  r.latencies_us.reserve(samples);
  const auto start = Clock::now();
  for (unsigned i = 0; i < samples; ++i) {
    ibat_path path{};
    const auto sent = Clock::now();
    int status = ibat_resolve_sync(h, &targets[i % targets.size()], nullptr, &path);
    r.latencies_us.push_back(micros(Clock::now() - sent));
    count_outcome(r, status, &path);
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

RunResult run_table(ibat_t* h, const std::vector<ibat_target>& targets, double seconds) {
  RunResult r;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::size_t i = 0;
  ibat_path path{};
  do {  // the clock is read once per 1024 resolves, not per resolve
    for (int n = 0; n < 1024; ++n, i = i + 1 == targets.size() ? 0 : i + 1)
      count_outcome(r, ibat_resolve_sync(h, &targets[i], nullptr, &path), &path);
  } while (Clock::now() < end);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

RunResult run_table_batch(ibat_t* h, const std::vector<ibat_target>& targets, double seconds) {
  RunResult r;
  std::vector<ibat_path> paths(targets.size());
  std::vector<unsigned char> hit(targets.size());
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  do {  // the clock is read once per >= 1024 resolves, as in run_table
    for (std::size_t done = 0; done < 1024; done += targets.size()) {
      ibat_resolve_table(h, targets.data(), targets.size(), nullptr, paths.data(), hit.data());
      for (std::size_t i = 0; i < targets.size(); ++i) count_outcome(r, hit[i] ? IBAT_OK : IBAT_ENORECORD, &paths[i]);
    }
  } while (Clock::now() < end);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

RunResult run_bare_map(const std::vector<ibat_target>& targets, const std::vector<ibat_path>& paths, double seconds) {
  struct Key {
    std::uint64_t hi, lo;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept { return std::hash<std::uint64_t>{}(k.hi * 31 ^ k.lo); }
  };
  auto key_of = [](const ibat_target& t) {
    Key k{};
    std::memcpy(&k.hi, t.u.gid.raw, 8);
    std::memcpy(&k.lo, t.u.gid.raw + 8, 8);
    return k;
  };
  std::unordered_map<Key, ibat_path, KeyHash> map;
  for (std::size_t i = 0; i < targets.size(); ++i) map.emplace(key_of(targets[i]), paths[i]);
  RunResult r;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::size_t i = 0;
  ibat_path path{};
  do {
    for (int n = 0; n < 1024; ++n, i = i + 1 == targets.size() ? 0 : i + 1) {
      auto it = map.find(key_of(targets[i]));
      if (it != map.end()) path = it->second;
      count_outcome(r, it != map.end() ? IBAT_OK : IBAT_ENORECORD, &path);
    }
  } while (Clock::now() < end);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

double quantile(std::vector<double>& samples, double q) {
  if (samples.empty()) return 0;
  auto rank = static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1) + 0.5);
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(rank), samples.end());
  return samples[rank];
}

DaemonStats daemon_stats(ibat_t* h) {
  char* text = nullptr;
  if (ibat_query_json(h, IBAT_LIST_STATS, &text) != IBAT_OK)
    throw std::runtime_error(std::string("stats query failed: ") + ibat_last_message(h));
  DaemonStats out{nlohmann::json::parse(text, nullptr, false)};
  ibat_free(text);
  return out;
}

std::uint64_t DaemonStats::counter(const char* name) const {
  if (!stats.is_object() || !stats.contains(name) || !stats[name].is_number_unsigned()) return 0;
  return stats[name].get<std::uint64_t>();
}

double DaemonStats::polled_seconds() const {
  static const nlohmann::json::json_pointer at("/busy_poll/polled_s");
  if (!stats.is_object() || !stats.contains(at) || !stats[at].is_number()) return 0;
  return stats[at].get<double>();
}

}  // namespace ibat::bench
