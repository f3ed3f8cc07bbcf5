// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-kernel-twin: sends the kernel's local SA RESOLVE requests to an ibatd local_sa_socket and
// prints, per destination, what the kernel would do with the reply (one JSON object per line).
// Used by the lab tests (tests/lab/e2e_local_sa.sh) to compare ibatd's answers with saquery.
// With --bench N it instead times N cached answers, one in flight as the kernel's callers mostly
// are, against a baseline measured in the same run: an in-process echo over a datagram socketpair
// (the transport's floor), and prints one JSON object.
#include <optional>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <linux/netlink.h>
#include <poll.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kernel_twin.h"

namespace {

using namespace ibat;
using Clock = std::chrono::steady_clock;

int connect_twin(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un self{};
  self.sun_family = AF_UNIX;
  // An autobound abstract address, so that ibatd can answer to this socket.
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&self), sizeof(sa_family_t)) != 0) return -1;
  sockaddr_un peer{};
  peer.sun_family = AF_UNIX;
  if (path.size() >= sizeof(peer.sun_path)) return -1;
  std::memcpy(peer.sun_path, path.data(), path.size());
  if (connect(fd, reinterpret_cast<sockaddr*>(&peer), sizeof(peer)) != 0) return -1;
  return fd;
}

struct Exchange {
  twin::Verdict verdict{twin::Outcome::ignored, {}, 0, "no reply within the kernel's timeout"};
  double latency_us = 0;
};

// Sends one request and waits, as the kernel does, for the reply to its sequence number.
Exchange ask(int fd, const std::vector<std::uint8_t>& request, std::uint32_t seq, std::uint8_t use, int timeout_ms) {
  Exchange out;
  const auto sent = Clock::now();
  if (send(fd, request.data(), request.size(), 0) < 0) return out;
  std::vector<std::uint8_t> buffer(8192);
  for (;;) {
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - sent);
    pollfd p{fd, POLLIN, 0};
    if (waited.count() >= timeout_ms || poll(&p, 1, static_cast<int>(timeout_ms - waited.count())) <= 0) break;
    const ssize_t n = recv(fd, buffer.data(), buffer.size(), 0);
    if (n < 0) break;
    out.verdict = twin::judge(std::span(buffer.data(), static_cast<std::size_t>(n)), seq, use);
    if (out.verdict.outcome != twin::Outcome::ignored) break;  // a stale reply: keep waiting, as the kernel does
  }
  out.latency_us = std::chrono::duration<double, std::micro>(Clock::now() - sent).count();
  return out;
}

struct Timing {
  double per_s = 0, p50_us = 0, p99_us = 0;
  std::size_t not_answered = 0;  // replies that were not a path (bench) / not a fallback (baseline)
};

Timing time_requests(int fd, const std::vector<std::vector<std::uint8_t>>& requests, std::uint8_t use,
                     twin::Outcome expected, std::size_t count, int timeout_ms) {
  std::vector<double> latencies;
  latencies.reserve(count);
  Timing t;
  const auto start = Clock::now();
  for (std::size_t i = 0; i < count; ++i) {
    const auto& request = requests[i % requests.size()];
    nlmsghdr header{};
    std::memcpy(&header, request.data(), sizeof(header));
    Exchange e = ask(fd, request, header.nlmsg_seq, use, timeout_ms);
    if (e.verdict.outcome != expected) ++t.not_answered;
    latencies.push_back(e.latency_us);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(latencies.begin(), latencies.end());
  t.per_s = static_cast<double>(count) / seconds;
  t.p50_us = latencies[latencies.size() / 2];
  t.p99_us = latencies[latencies.size() * 99 / 100];
  return t;
}

// The transport's floor: a thread answering each datagram at once with F_ERR over a socketpair.
Timing echo_baseline(const std::vector<std::vector<std::uint8_t>>& requests, std::uint8_t use, std::size_t count) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) return {};
  std::thread echo([fd = pair[1]] {
    std::vector<std::uint8_t> buffer(8192);
    for (;;) {
      const ssize_t n = recv(fd, buffer.data(), buffer.size(), 0);
      if (n < static_cast<ssize_t>(sizeof(nlmsghdr))) return;
      nlmsghdr header{};
      std::memcpy(&header, buffer.data(), sizeof(header));
      header.nlmsg_len = sizeof(header);
      header.nlmsg_flags = RDMA_NL_LS_F_ERR;
      send(fd, &header, sizeof(header), 0);
    }
  });
  Timing t = time_requests(pair[0], requests, use, twin::Outcome::fallback, count, 2000);
  send(pair[0], "", 0, 0);  // an empty datagram ends the echo thread
  close(pair[0]);
  echo.join();
  close(pair[1]);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path, sgid_text, caller_text = "ipoib", pkey_text = "0xffff";
  std::vector<std::string> dgids;
  int timeout_ms = 2000;
  std::uint32_t rounds = 1;
  std::size_t bench = 0;
  std::string device = "mlx5_0";
  int port = 1;
  std::uint64_t service_id = 0x1000000000000000ULL;
  std::optional<std::uint16_t> qos_class;
  CLI::App app{"ibat-kernel-twin: ask ibatd's local SA socket the way the Linux kernel does"};
  app.add_option("--socket", socket_path, "ibatd's [linux] local_sa_socket")->required();
  app.add_option("--sgid", sgid_text, "source GID (the local port)")->required();
  app.add_option("--caller", caller_text, "ipoib, rdma_cm or srp")->check(CLI::IsMember({"ipoib", "rdma_cm", "srp"}));
  app.add_option("--pkey", pkey_text, "P_Key");
  app.add_option("--device", device, "the HCA the kernel names in the resolve header (default mlx5_0)");
  app.add_option("--port", port, "its port number (default 1)")->check(CLI::Range(0, 255));
  app.add_option("--kernel-timeout-ms", timeout_ms, "the kernel's local SA timeout (it then asks the SA)");
  app.add_option("--service-id", service_id, "the ServiceID rdma_cm and SRP send (port space << 16 + port)");
  app.add_option("--qos-class", qos_class, "rdma_cm's QOS_CLASS (the IPv4 ToS); without it, TCLASS")
      ->check(CLI::Range(0, 0xFFF));
  app.add_option("--rounds", rounds, "ask for every DGID this many times");
  app.add_option("--bench", bench, "time N cached answers against an in-process echo baseline; print JSON");
  app.add_option("dgid", dgids, "destination GIDs")->required();
  CLI11_PARSE(app, argc, argv);

  twin::KernelQuery query;
  query.caller = caller_text == "rdma_cm" ? twin::Caller::rdma_cm
                 : caller_text == "srp"   ? twin::Caller::srp
                                          : twin::Caller::ipoib;
  auto sgid = core::Gid::parse(sgid_text);
  auto pkey = core::Pkey::parse(pkey_text);
  if (!sgid || !pkey) {
    std::fprintf(stderr, "ibat-kernel-twin: bad --sgid or --pkey\n");
    return 2;
  }
  query.sgid = *sgid;
  query.pkey = *pkey;
  query.service_id = service_id;
  query.qos_class = qos_class;
  const std::uint8_t use = twin::path_use_of(query.caller);
  std::vector<std::vector<std::uint8_t>> requests;
  std::uint32_t seq = 1;
  for (const auto& text : dgids) {
    auto dgid = core::Gid::parse(text);
    if (!dgid) {
      std::fprintf(stderr, "ibat-kernel-twin: bad DGID '%s'\n", text.c_str());
      return 2;
    }
    query.dgid = *dgid;
    requests.push_back(twin::build_resolve(query, ++seq, device, static_cast<std::uint8_t>(port)));
  }
  const int fd = connect_twin(socket_path);
  if (fd < 0) {
    std::fprintf(stderr, "ibat-kernel-twin: cannot reach %s: %s\n", socket_path.c_str(), std::strerror(errno));
    return 3;
  }

  if (bench > 0) {
    // Warm: every destination once, so that what is timed is the cached answer.
    time_requests(fd, requests, use, twin::Outcome::path, requests.size(), timeout_ms);
    const Timing ibatd = time_requests(fd, requests, use, twin::Outcome::path, bench, timeout_ms);
    const Timing echo = echo_baseline(requests, use, bench);
    nlohmann::json out{{"requests", bench},
                       {"local_sa_answers_per_s", ibatd.per_s},
                       {"local_sa_p50_us", ibatd.p50_us},
                       {"local_sa_p99_us", ibatd.p99_us},
                       {"local_sa_not_a_path", ibatd.not_answered},
                       {"echo_baseline_per_s", echo.per_s},
                       {"echo_baseline_p99_us", echo.p99_us},
                       {"ratio_to_baseline", echo.per_s > 0 ? ibatd.per_s / echo.per_s : 0.0}};
    std::printf("%s\n", out.dump().c_str());
    close(fd);
    return ibatd.not_answered == 0 ? 0 : 1;
  }

  for (std::uint32_t round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < requests.size(); ++i) {
      auto& request = requests[i];
      const std::uint32_t this_seq = ++seq;
      std::memcpy(request.data() + offsetof(nlmsghdr, nlmsg_seq), &this_seq, sizeof(this_seq));
      Exchange e = ask(fd, request, this_seq, use, timeout_ms);
      const twin::Verdict& verdict = e.verdict;
      nlohmann::json line{{"dgid", dgids[i]}, {"caller", caller_text}};
      const bool timed_out = verdict.outcome == twin::Outcome::ignored;
      line["outcome"] = timed_out ? "kernel_timeout" : std::string(twin::to_string(verdict.outcome));
      line["latency_us"] = e.latency_us;
      if (!verdict.why.empty()) line["why"] = verdict.why;
      if (!verdict.paths.empty()) {
        const auto& p = verdict.paths.front();
        line["dlid"] = p.dlid.value;
        line["slid"] = p.slid.value;
        line["sl"] = p.sl;
        line["mtu"] = p.mtu;
        line["rate"] = p.rate;
        line["flags"] = verdict.first_flags;
      }
      std::printf("%s\n", line.dump().c_str());
    }
  }
  close(fd);
  return 0;
}
