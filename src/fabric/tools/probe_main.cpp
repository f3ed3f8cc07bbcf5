// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-probe: resolves one path through the real SA with FabricPort (no daemon, no cache) — the
// uncached baseline and a debugging tool. `--count`/`--interval-ms` repeat the resolution in one
// process (one JSON line each); `--monitor S` prints port, SM and trap events as JSON lines;
// `--table` asks the PathRecord GetTable of the port's subnet and prints every usable record.
// Exit codes: 0 ok, 1 other error, 2 usage, 3 no record, 4 timeout.
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "fabric/fabric_port.h"

namespace {

using ibat::core::Error;
using nlohmann::json;

constexpr int kExitOk = 0;
constexpr int kExitOther = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoRecord = 3;
constexpr int kExitTimeout = 4;

int exit_code(Error e) {
  switch (e) {
    case Error::ok: return kExitOk;
    case Error::no_record: return kExitNoRecord;
    case Error::timeout: return kExitTimeout;
    default: return kExitOther;
  }
}

struct Args {
  std::string dgid_text, sgid_text, pkey_text = "0xffff", ca;
  std::optional<std::uint16_t> dlid;
  int port = 0;
  bool json_out = false, table = false;
  unsigned timeout_ms = 200, retries = 3, poll_ms = 1000, count = 1, interval_ms = 1000, sm_check_s = 60;
  std::uint32_t max_records = ibat::fabric::kDefaultTableMaxRecords;
  double monitor_seconds = 0;
};

json stats_json(const ibat::fabric::FabricStats& s) {
  return {{"mads_sent", s.mads_sent},       {"mads_received", s.mads_received},
          {"mad_timeouts", s.mad_timeouts}, {"mad_retries", s.mad_retries},
          {"late_or_duplicate", s.late_or_duplicate}, {"invalid_responses", s.invalid_responses},
          {"reports", s.reports},           {"sm_changes", s.sm_changes},
          {"oversized_mads", s.oversized_mads},
          {"sa_gettables_sent", s.sa_gettables_sent}, {"sa_gettables_answered", s.sa_gettables_answered},
          {"sa_table_records", s.sa_table_records},   {"sa_table_bytes", s.sa_table_bytes}};
}

json path_json(const ibat::core::PathRecord& p) {
  return {{"dgid", p.dgid.to_string()},  {"sgid", p.sgid.to_string()},
          {"dlid", p.dlid.value},        {"slid", p.slid.value},
          {"sl", p.sl},                  {"mtu", ibat::core::mtu_bytes(p.mtu).value_or(0)},
          {"rate", ibat::core::rate_gbps(p.rate).value_or(0.0)}, {"pkt_life", p.pkt_life},
          {"pkey", p.pkey.to_string()}};
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Prints one JSON line with the wall-clock time (ms since the epoch) so tests can line events up
// with the faults they inject; flushed, since tests read lines while the probe runs.
void print_line(json j) {
  j["wall_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch()).count();
  std::cout << j.dump() << std::endl;
}

// What the probe hears of the port: query answers go to `answered`; with `print_events` (monitor)
// every port, SM and trap event is printed as a JSON line.
class ProbeInput final : public ibat::core::FabricInput {
 public:
  ProbeInput(std::chrono::steady_clock::time_point t0, bool print_events) : t0_(t0), print_(print_events) {}
  std::function<void(const ibat::core::QueryResult&)> answered;

  void on_query_result(ibat::core::QueryId, const ibat::core::QueryResult& result) override {
    if (answered) answered(result);
  }
  void on_table_result(ibat::core::QueryId, const ibat::core::TableResult&) override {}
  void on_subnet_size(ibat::core::QueryId, const ibat::core::SubnetSizeResult&) override {}
  void on_local_port(const ibat::core::LocalPort& p) override {
    event("local_port", {{"gid", p.gid.to_string()}, {"lid", p.lid.value}, {"sm_lid", p.sm_lid.value},
                         {"active", p.active}});
  }
  void on_sm_changed() override { event("sm_changed", json::object()); }
  void on_gid_out_of_service(const ibat::core::Gid& g) override { event("gid_out_of_service", {{"gid", g.to_string()}}); }
  void on_gid_in_service(const ibat::core::Gid& g) override { event("gid_in_service", {{"gid", g.to_string()}}); }
  void on_broadcast_params(const ibat::core::BroadcastParams& b) override {
    event("broadcast", {{"pkey", b.pkey.to_string()}, {"mtu", ibat::core::mtu_bytes(b.mtu).value_or(0)},
                        {"rate", ibat::core::rate_gbps(b.rate).value_or(0.0)}, {"sl", b.sl}});
  }

 private:
  void event(const char* name, json fields) const {
    if (!print_) return;
    fields["event"] = name;
    fields["t_ms"] = ms_since(t0_);
    print_line(std::move(fields));
  }
  std::chrono::steady_clock::time_point t0_;
  bool print_;
};

// Prints every event for `seconds`, then the counters.
int run_monitor(asio::io_context& loop, ibat::fabric::FabricOptions options, double seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  ProbeInput input(t0, true);
  ibat::fabric::FabricEvents events;
  events.input = &input;
  events.on_trap_subscribed = [&](std::uint16_t trap, bool ok) {
    print_line({{"event", "trap_subscribed"}, {"t_ms", ms_since(t0)}, {"trap", trap}, {"ok", ok}});
  };
  ibat::fabric::FabricPort fabric(loop, options, events);
  asio::signal_set signals(loop, SIGINT, SIGTERM);  // stop cleanly: the ibsim client slot is freed
  signals.async_wait([&](const std::error_code& ec, int) {
    if (!ec) loop.stop();
  });
  fabric.start();
  loop.run_for(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(seconds)));
  fabric.stop();
  print_line({{"event", "stats"}, {"t_ms", ms_since(t0)}, {"stats", stats_json(fabric.stats())}});
  return kExitOk;
}

// Resolves the path `count` times, `interval_ms` apart; returns the exit code of the last one.
int run_probe(asio::io_context& loop, const ibat::fabric::FabricOptions& options, const Args& args,
              std::optional<ibat::core::Gid> dgid, std::optional<ibat::core::Gid> sgid, ibat::core::Pkey pkey) {
  Error last = Error::ok;
  unsigned done = 0;
  std::optional<ibat::fabric::FabricPort> fabric;
  asio::steady_timer next(loop);
  std::function<void()> send_one;
  const auto t0 = std::chrono::steady_clock::now();

  ProbeInput input(t0, false);
  ibat::fabric::FabricEvents events;
  events.input = &input;
  input.answered = [&](const ibat::core::QueryResult& result) {
    last = result.error;
    ++done;
    if (args.json_out) {
      json j = result.error == Error::ok ? path_json(result.path) : json::object();
      j["result"] = std::string(ibat::core::to_string(result.error));
      j["t_ms"] = ms_since(t0);
      j["stats"] = stats_json(fabric->stats());
      print_line(j);
    } else if (result.error == Error::ok) {
      const auto& p = result.path;
      std::printf("dgid %s sgid %s dlid %u slid %u sl %u mtu %u rate %g pkt_life %u pkey %s\n",
                  p.dgid.to_string().c_str(), p.sgid.to_string().c_str(), p.dlid.value, p.slid.value, p.sl,
                  ibat::core::mtu_bytes(p.mtu).value_or(0), ibat::core::rate_gbps(p.rate).value_or(0.0),
                  p.pkt_life, p.pkey.to_string().c_str());
    } else {
      std::fprintf(stderr, "ibat-probe: %s: %s\n", ibat::core::to_string(result.error).data(),
                   result.error == Error::no_record ? "the SA has no path to that destination"
                   : result.error == Error::timeout ? "the SA did not answer (all retries timed out)"
                                                    : "the SA answer was refused");
    }
    if (done == args.count) {
      loop.stop();
      return;
    }
    next.expires_after(std::chrono::milliseconds(args.interval_ms));
    next.async_wait([&](const std::error_code& ec) {
      if (!ec) send_one();
    });
  };
  fabric.emplace(loop, options, events);
  send_one = [&] {
    ibat::core::PathQuery q;
    q.id = done + 1;
    q.sgid = sgid.value_or(fabric->local_port().gid);
    q.dgid = dgid;
    if (args.dlid) q.dlid = ibat::core::Lid{*args.dlid};
    q.pkey = pkey;
    fabric->send_path_query(q);
  };
  fabric->start();
  send_one();
  loop.run();
  fabric->stop();
  return exit_code(last);
}

// One PathRecord GetTable from the port (SGID only): each usable record on a line (JSON with
// --json), then a summary line with what was left out and why a failure failed.
int run_table(asio::io_context& loop, const ibat::fabric::FabricOptions& options, const Args& args,
              std::optional<ibat::core::Gid> sgid, ibat::core::Pkey pkey) {
  const auto t0 = std::chrono::steady_clock::now();
  Error last = Error::ok;
  ibat::fabric::FabricEvents events;
  events.on_table_fallback = [](const std::string& reason) {
    std::fprintf(stderr, "ibat-probe: GetTables off until the next SM: %s\n", reason.c_str());
  };
  ibat::fabric::FabricPort fabric(loop, options, events);
  auto done = [&](const ibat::fabric::PathTable& table) {
    last = table.error;
    for (const auto& p : table.paths) {
      if (args.json_out) {
        print_line(path_json(p));
      } else {
        std::printf("dgid %s dlid %u sl %u mtu %u rate %g pkt_life %u\n", p.dgid.to_string().c_str(), p.dlid.value,
                    p.sl, ibat::core::mtu_bytes(p.mtu).value_or(0), ibat::core::rate_gbps(p.rate).value_or(0.0),
                    p.pkt_life);
      }
    }
    json summary{{"result", std::string(ibat::core::to_string(table.error))},
                 {"records", table.records},
                 {"paths", table.paths.size()},
                 {"switch_ports", table.switch_ports},
                 {"extra_paths", table.extra_paths},
                 {"switches_known", table.switches_known},
                 {"t_ms", ms_since(t0)},
                 {"stats", stats_json(fabric.stats())}};
    if (table.error != Error::ok) summary["reason"] = table.reason;
    if (args.json_out) {
      print_line({{"table", summary}});
    } else if (table.error == Error::ok) {
      std::printf("%zu records: %zu paths; left out %zu to switch port 0, %zu more for a listed DGID%s\n",
                  table.records, table.paths.size(), table.switch_ports, table.extra_paths,
                  table.switches_known ? "" : " (switches unknown)");
    } else {
      std::fprintf(stderr, "ibat-probe: %s: %s\n", ibat::core::to_string(table.error).data(), table.reason.c_str());
    }
    loop.stop();
  };
  fabric.start();
  if (!fabric.query_path_table(sgid.value_or(fabric.local_port().gid), pkey, done)) {
    fabric.stop();
    return kExitOther;  // on_table_fallback said why
  }
  loop.run();
  fabric.stop();
  return exit_code(last);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{"ibat-probe: resolve one SA PathRecord, uncached (exit 0 ok, 2 usage, 3 no record, 4 timeout)"};
  auto* dgid_opt = app.add_option("--dgid", args.dgid_text, "destination GID");
  auto* dlid_opt = app.add_option("--dlid", args.dlid, "destination LID (instead of --dgid)");
  app.add_option("--sgid", args.sgid_text, "source GID (default: the local port GID)");
  app.add_option("--pkey", args.pkey_text, "P_Key (default 0xffff)");
  app.add_option("--ca", args.ca, "CA name (default: the first one)");
  app.add_option("--port", args.port, "CA port (default: the first active one)");
  app.add_flag("--json", args.json_out, "print the path as JSON");
  app.add_option("--timeout-ms", args.timeout_ms, "first MAD attempt timeout")->check(CLI::Range(1U, 60000U));
  app.add_option("--retries", args.retries, "MAD resends after the first attempt")->check(CLI::Range(0U, 100U));
  app.add_option("--count", args.count, "resolve this many times (one JSON line each)")->check(CLI::Range(1U, 100000U));
  app.add_option("--interval-ms", args.interval_ms, "pause between resolutions with --count");
  app.add_option("--poll-ms", args.poll_ms, "local PortInfo poll interval")->check(CLI::Range(10U, 600000U));
  app.add_option("--sm-check-s", args.sm_check_s, "routine SM/SA check interval (x [1, 1.5))")
      ->check(CLI::Range(1U, 86400U));
  auto* monitor_opt = app.add_option("--monitor", args.monitor_seconds,
                                     "print port/SM/trap events as JSON lines for SECONDS, then exit");
  auto* table_opt = app.add_flag("--table", args.table,
                                 "PathRecord GetTable from the port (SGID only): print every usable record");
  app.add_option("--max-records", args.max_records, "with --table: the most records an answer may hold")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  dgid_opt->excludes(dlid_opt);
  monitor_opt->excludes(dgid_opt)->excludes(dlid_opt);
  table_opt->excludes(dgid_opt)->excludes(dlid_opt)->excludes(monitor_opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  auto usage = [](const std::string& msg) {
    std::fprintf(stderr, "ibat-probe: %s (see --help)\n", msg.c_str());
    return kExitUsage;
  };
  std::optional<ibat::core::Gid> dgid, sgid;
  if (!args.dgid_text.empty() && !(dgid = ibat::core::Gid::parse(args.dgid_text))) {
    return usage("bad --dgid '" + args.dgid_text + "': expected an IPv6-style GID like fe80::2:c903:a:b");
  }
  if (!args.sgid_text.empty() && !(sgid = ibat::core::Gid::parse(args.sgid_text))) {
    return usage("bad --sgid '" + args.sgid_text + "'");
  }
  const auto pkey = ibat::core::Pkey::parse(args.pkey_text);
  if (!pkey || !pkey->is_valid()) return usage("bad --pkey '" + args.pkey_text + "': expected e.g. 0xffff");
  if (args.monitor_seconds <= 0 && !args.table && !dgid && !args.dlid) {
    return usage("give --dgid, --dlid, --table or --monitor");
  }
  if (args.dlid && (*args.dlid == 0 || *args.dlid >= 0xC000)) return usage("--dlid must be a unicast LID");

  ibat::fabric::FabricOptions options;
  options.ca = args.ca;
  options.port = args.port;
  options.mad_timeout = std::chrono::milliseconds(args.timeout_ms);
  options.mad_retries = args.retries;
  options.poll_interval = std::chrono::milliseconds(args.poll_ms);
  options.sm_check_interval = std::chrono::seconds(args.sm_check_s);
  options.subscribe_traps = args.monitor_seconds > 0;
  options.broadcast_pkey = *pkey;
  options.table_max_records = args.max_records;
  try {
    asio::io_context loop;
    if (args.monitor_seconds > 0) return run_monitor(loop, options, args.monitor_seconds);
    if (args.table) return run_table(loop, options, args, sgid, *pkey);
    return run_probe(loop, options, args, dgid, sgid, *pkey);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibat-probe: %s\n", e.what());
    return kExitOther;
  }
}
