// ibat-kernel-twin: sends the kernel's local SA RESOLVE requests to an ibatd local_sa_socket and
// prints, per destination, what the kernel would do with the reply (one JSON object per line).
// Used by the lab tests (tests/lab/e2e_local_sa.sh) to compare ibatd's answers with saquery.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kernel_twin.h"

namespace {

using namespace ibat;

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

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path, sgid_text, caller_text = "ipoib", pkey_text = "0xffff";
  std::vector<std::string> dgids;
  int timeout_ms = 2000;
  std::uint32_t rounds = 1;
  CLI::App app{"ibat-kernel-twin: ask ibatd's local SA socket the way the Linux kernel does"};
  app.add_option("--socket", socket_path, "ibatd's [linux] local_sa_socket")->required();
  app.add_option("--sgid", sgid_text, "source GID (the local port)")->required();
  app.add_option("--caller", caller_text, "ipoib, rdma_cm or srp")->check(CLI::IsMember({"ipoib", "rdma_cm", "srp"}));
  app.add_option("--pkey", pkey_text, "P_Key");
  app.add_option("--kernel-timeout-ms", timeout_ms, "the kernel's local SA timeout (it then asks the SA)");
  app.add_option("--rounds", rounds, "ask for every DGID this many times");
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
  query.service_id = 0x1000000000000000ULL;
  const int fd = connect_twin(socket_path);
  if (fd < 0) {
    std::fprintf(stderr, "ibat-kernel-twin: cannot reach %s: %s\n", socket_path.c_str(), std::strerror(errno));
    return 3;
  }
  std::uint32_t seq = 1;
  for (std::uint32_t round = 0; round < rounds; ++round) {
    for (const auto& text : dgids) {
      auto dgid = core::Gid::parse(text);
      if (!dgid) {
        std::fprintf(stderr, "ibat-kernel-twin: bad DGID '%s'\n", text.c_str());
        return 2;
      }
      query.dgid = *dgid;
      const auto request = twin::build_resolve(query, ++seq);
      const auto sent = std::chrono::steady_clock::now();
      if (send(fd, request.data(), request.size(), 0) < 0) return 3;
      nlohmann::json line{{"dgid", text}, {"caller", caller_text}};
      twin::Verdict verdict{twin::Outcome::ignored, {}, 0, "no reply within the kernel's timeout"};
      std::vector<std::uint8_t> buffer(8192);
      for (;;) {
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - sent);
        pollfd p{fd, POLLIN, 0};
        if (waited.count() >= timeout_ms || poll(&p, 1, static_cast<int>(timeout_ms - waited.count())) <= 0) break;
        const ssize_t n = recv(fd, buffer.data(), buffer.size(), 0);
        if (n < 0) break;
        verdict = twin::judge(std::span(buffer.data(), static_cast<std::size_t>(n)), seq, twin::path_use_of(query.caller));
        if (verdict.outcome != twin::Outcome::ignored) break;  // a stale reply: keep waiting, as the kernel does
      }
      const bool timed_out = verdict.outcome == twin::Outcome::ignored;
      line["outcome"] = timed_out ? "kernel_timeout" : std::string(twin::to_string(verdict.outcome));
      line["latency_us"] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - sent).count();
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
