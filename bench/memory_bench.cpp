// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-bench-memory: what ibatd's Service (every port's Resolver, the socket servers, the shared
// table and its publisher: the daemon minus its fabric threads) costs in memory for the paths it
// holds and the ports it serves. Each scenario runs in a child process of its own: the Service
// starts with N ports whose fake SA answers every query at once with a valid path, P paths per
// port are resolved (a thousand at a time; in one scenario the same P again with a QoS class, as
// a host whose programs connect with one ToS holds them), and the child reports its RSS (anonymous
// and shared: the table's pages), the cache entries held and the table file's size and the bytes
// it uses, beside the same child's RSS before the Service. One JSON object per scenario on stdout
// (docs/performance.md, "Memory").
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <asio/io_context.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/path_cache.h"
#include "server/daemon/service.h"
#include "shm/path_table_layout.h"

namespace {

using namespace ibat;

struct Scenario {
  const char* name;
  int ports;
  std::uint32_t paths_per_port;
  // The same destinations resolved again with this QoS class (nullopt: the default paths alone).
  std::optional<std::uint16_t> qos_class = std::nullopt;
};
// Any class but 0, which qos_classes = "auto" (the default) leaves to the default paths: one
// that is cached apart.
constexpr std::uint16_t kQosClass = 3;
// The figures docs/performance.md quotes: an idle host (one port, and eight: what a port costs
// before it holds a path), a 4-rail host with about the paths of a 12-host 4-rail lab tree, and a
// large 8-rail host, and that host whose programs also use one QoS class: what a class costs.
constexpr Scenario kScenarios[] = {
    {"idle, 1 port", 1, 0},
    {"idle, 8 ports", 8, 0},
    {"4 ports, 200 paths", 4, 50},
    {"8 ports, 10,000 paths each", 8, 10'000},
    {"8 ports, 10,000 paths each, and the same of one QoS class", 8, 10'000, kQosClass},
};

// A port's fabric whose SA queries are kept for the benchmark to answer.
class AnsweringFabric final : public server::Service::PortFabric, public core::QuerySink {
 public:
  core::QuerySink& sink() override { return *this; }
  fabric::FabricStats stats() const override { return {}; }
  std::optional<core::LocalPort> opened_port() const override { return std::nullopt; }
  void start() override {}
  void stop() override {}
  void send_path_query(const core::PathQuery& query) override { queries.push_back(query); }
  std::vector<core::PathQuery> queries;
};

core::Gid gid(std::uint64_t port, std::uint64_t n) {
  return core::Gid::from_parts(0xfe80000000000000ULL, 0x0002c90300000000ULL | port << 24 | n);
}

core::PathRecord path_for(const core::PathQuery& q, std::uint16_t dlid) {
  core::PathRecord p;
  p.sgid = q.sgid;
  p.dgid = *q.dgid;
  p.pkey = q.pkey;
  p.dlid = core::Lid{dlid};
  p.slid = core::Lid{1};
  p.mtu = 4;
  p.rate = 16;
  p.pkt_life = 18;
  p.reversible = true;
  p.qos_class = q.qos_class.value_or(0);
  return p;
}

// Kibibytes of a /proc/self/status field (VmRSS, RssAnon, RssShmem).
std::uint64_t status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0) return std::strtoull(line.c_str() + field.size() + 1, nullptr, 10);
  return 0;
}

nlohmann::json run(const Scenario& s, const std::filesystem::path& dir) {
  const std::uint64_t rss_before = status_kib("VmRSS");
  asio::io_context loop;
  server::DaemonConfig config;
  config.server.socket = (dir / "ibatd.sock").string();
  config.snapshot.cache_file.clear();
  config.server.acm_socket.clear();  // the built-in /run/ibat/acm.sock is an installed daemon's
  config.policy.sa_rate = 1e9;  // the token bucket would pace the fake SA's queries
  config.policy.sa_burst = 1'000'000;
  std::vector<server::Service::PortSpec> specs;
  std::vector<AnsweringFabric*> fabrics;
  for (int i = 0; i < s.ports; ++i) specs.push_back({"mlx5_" + std::to_string(i), 1});
  server::Service service(loop, config, specs, [&](const server::Service::PortSpec&, fabric::FabricEvents) {
    auto fabric = std::make_unique<AnsweringFabric>();
    fabrics.push_back(fabric.get());
    return fabric;
  });
  service.start();
  // Each port resolves its paths kBatch at a time, as a host's jobs ask (not all at once, which
  // would leave the heap at the peak of that many requests in flight); the queries go out as the
  // Resolver paces them (its timers run on the loop) and each is answered at once. A class's
  // resolves go by GET as the default ones do: the fake port sends no GetTable, so the class
  // table the first one asks for (core::SaScheduler::add_class_table) goes unsent and its
  // resolves are sent by GET, each answered with the class.
  constexpr std::uint32_t kBatch = 1'000;
  constexpr int kIdleRounds = 200;  // of 1 ms each: far longer than any pacing step
  std::size_t completed = 0;
  auto resolve_all = [&](std::size_t index, std::optional<std::uint16_t> qos_class) {
    const auto port = static_cast<std::uint64_t>(index);
    for (std::uint32_t first = 1; first <= s.paths_per_port; first += kBatch) {
      const std::uint32_t last = std::min(s.paths_per_port, first + kBatch - 1);
      for (std::uint32_t n = first; n <= last; ++n) {
        core::ResolveRequest request;
        request.target = gid(port, n);
        request.qos_class = qos_class;
        service.port(index).resolver().resolve(request, [&](core::RequestId, const core::ResolveResult&) { ++completed; });
      }
      const std::size_t wanted = completed + (last - first + 1);
      for (int idle = 0; completed < wanted && idle < kIdleRounds;) {
        loop.run_for(std::chrono::milliseconds(1));
        std::vector<core::PathQuery> queries;
        queries.swap(fabrics[index]->queries);
        for (const core::PathQuery& q : queries)
          if (q.dgid) service.port(index).on_query_result(q.id, core::QueryResult{core::Error::ok, path_for(q, 2)});
        idle = queries.empty() ? idle + 1 : 0;
      }
    }
  };
  for (int i = 0; i < s.ports; ++i) {
    const auto index = static_cast<std::size_t>(i);
    service.port(index).on_local_port(core::LocalPort{gid(index, 0), core::Lid{1}, core::Lid{1}, true});
    resolve_all(index, std::nullopt);
    if (s.qos_class) resolve_all(index, s.qos_class);
  }
  loop.poll();
  const std::string table = (dir / "ibatd.sock.table").string();
  struct stat st {};
  ::stat(table.c_str(), &st);
  const std::uint64_t rss = status_kib("VmRSS"), rss_anon = status_kib("RssAnon"), rss_shmem = status_kib("RssShmem");
  const std::uint64_t paths = std::uint64_t{s.paths_per_port} * static_cast<std::uint64_t>(s.ports);
  std::uint64_t entries = 0;
  for (int i = 0; i < s.ports; ++i) entries += service.port(static_cast<std::size_t>(i)).resolver().stats().entries;
  return {{"scenario", s.name},
          {"ports", s.ports},
          {"paths", paths},
          {"class_paths", s.qos_class ? paths : 0},
          {"resolved", completed},
          {"cache_entries", entries},
          {"published", service.table_published()},
          {"rss_kib", rss},
          {"rss_anon_kib", rss_anon},
          {"rss_shmem_kib", rss_shmem},
          {"rss_before_kib", rss_before},
          {"table_file_bytes", st.st_size},
          {"table_used_bytes", std::uint64_t(st.st_blocks) * 512},
          {"cache_entry_bytes", sizeof(core::CacheEntry)},
          {"table_slot_bytes", sizeof(shm::TableSlot)}};
}

}  // namespace

int main() {
  spdlog::set_level(spdlog::level::warn);
  // The socket's directory on tmpfs, as /run is on an installed host: the table's pages are RAM.
  const std::filesystem::path base =
      std::filesystem::is_directory("/dev/shm") ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
  for (const Scenario& s : kScenarios) {
    const std::filesystem::path dir = base / ("ibat-bench-memory-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::fflush(stdout);
    const pid_t child = ::fork();
    if (child == 0) {
      std::printf("%s\n", run(s, dir).dump().c_str());
      std::fflush(stdout);
      std::_Exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    std::filesystem::remove_all(dir);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "ibat-bench-memory: scenario '%s' failed\n", s.name);
      return 1;
    }
  }
  return 0;
}
