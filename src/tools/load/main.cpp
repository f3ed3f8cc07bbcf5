// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-load: load generator for ibatd that keeps resolving through a fault and accounts for every
// request. Prints a JSON summary (docs/reliability.md); exit 0 when every invariant holds, 1 when
// one is violated, 2 on a usage or connection error. SIGINT/SIGTERM stop sending, then drain.
#include <signal.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/load/daemon_stats.h"
#include "tools/load/ledger.h"
#include "tools/load/options.h"
#include "tools/load/runner.h"

namespace {

volatile std::sig_atomic_t stop_requested = 0;

void on_stop_signal(int) { stop_requested = 1; }

void install_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() returns EINTR and the loop sees the flag
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a daemon that goes away must not kill the load
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ibat::load;
  int exit_code = 0;
  std::optional<Options> options = parse_options(argc, argv, exit_code);
  if (!options) return exit_code;
  install_signals();

  std::vector<nlohmann::json> before;
  for (const auto& s : options->sockets) before.push_back(daemon_counters(s));

  Ledger ledger;
  Runner runner(*options, ledger);
  std::string error;
  if (!runner.connect_all(error)) {
    std::fprintf(stderr, "ibat-load: %s\n", error.c_str());
    return 2;
  }
  runner.run(stop_requested);
  // Books are closed before the connections: what is still outstanding now stays unanswered.
  nlohmann::json summary = ledger.summary(options->expect_exists, options->allowed_failures);
  std::vector<std::string> violations = ledger.violations(options->expect_exists, options->allowed_failures);
  runner.close_all();

  const RunCounters& c = runner.counters();
  nlohmann::json daemons = nlohmann::json::array();
  std::uint64_t sa_total = 0;
  bool sa_known = true;
  for (std::size_t i = 0; i < options->sockets.size(); ++i) {
    nlohmann::json after = daemon_counters(options->sockets[i]);
    std::optional<std::uint64_t> delta = sa_queries_between(before[i], after);
    if (delta) sa_total += *delta;
    else sa_known = false;
    daemons.push_back({{"socket", options->sockets[i]}, {"before", before[i]}, {"after", after}});
  }
  summary["sa_queries"] = sa_known ? nlohmann::json(sa_total) : nlohmann::json();
  summary["daemons"] = daemons;
  summary["destinations"] = options->destinations.size();
  summary["connections"] = options->connections;
  summary["depth"] = options->depth;
  summary["send_s"] = c.send_s;
  summary["total_s"] = c.total_s;
  summary["requests_per_s"] = c.send_s > 0 ? static_cast<double>(summary["sent"].get<std::uint64_t>()) / c.send_s : 0.0;
  summary["disconnects"] = c.disconnects;
  summary["reconnects"] = c.reconnects;
  summary["client_closes"] = c.client_closes;
  summary["passed"] = violations.empty();

  std::printf("%s\n", summary.dump(options->json ? -1 : 2).c_str());
  if (!options->json) {
    if (violations.empty()) std::fprintf(stderr, "ibat-load: all invariants hold\n");
    for (const auto& v : violations) std::fprintf(stderr, "ibat-load: VIOLATION: %s\n", v.c_str());
  }
  return violations.empty() ? 0 : 1;
}
