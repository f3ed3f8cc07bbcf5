// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat: command-line client of ibatd. Parses the command line (CLI11) and runs one command from
// commands.h; every failure ends with a one-line message on stderr and a documented exit code.
#include <iostream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/render.h"
#include "ibat.h"

namespace {

using namespace ibat::cli;

// "neigh add" for `ibat neigh add ...`: the chain of subcommands given on the command line.
std::string command_name(const CLI::App& app) {
  std::string name;
  for (const CLI::App* level = &app;;) {
    auto subs = level->get_subcommands();
    if (subs.empty()) return name;
    level = subs.front();
    name += (name.empty() ? "" : " ") + level->get_name();
  }
}

// --json anywhere on the command line (before a "--"): failures are printed as JSON too.
bool json_wanted(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") return false;
    if (arg == "--json") return true;
  }
  return false;
}
bool g_json_errors = false;

// A failure: one line on stderr and, under --json, {"error": {"code", "message"}} on stdout.
int fail(int code, const std::string& prefix, const std::string& message, const std::string& advice = "") {
  std::cerr << prefix << ": " << message << "\n" << advice;
  if (g_json_errors) std::cout << error_json(code, prefix + ": " + message).dump() << "\n";
  return code;
}

int fail_usage(const std::string& command, const std::string& message) {
  std::string prefix = command.empty() ? "ibat" : "ibat " + command;
  return fail(kExitUsage, prefix, message, "Run '" + prefix + " --help' for usage.\n");
}

// The deepest command given (the app itself when none): where a missing or unknown command is.
const CLI::App* deepest(const CLI::App& app) {
  const CLI::App* level = &app;
  while (!level->get_subcommands().empty()) level = level->get_subcommands().front();
  return level;
}

// "unknown command 'foo'" or "a command is required", with the commands `level` accepts; empty
// when the parse error is about something else.
std::string command_problem(const CLI::App& app) {
  const CLI::App* level = deepest(app);
  std::string names;  // option groups are unnamed subcommands: not commands
  for (const CLI::App* sub : level->get_subcommands({}))
    if (!sub->get_name().empty()) names += (names.empty() ? "" : ", ") + sub->get_name();
  if (names.empty()) return {};
  auto remaining = app.remaining(true);
  for (const std::string& arg : remaining)
    if (!arg.empty() && arg.front() != '-') return "unknown command '" + arg + "' (commands: " + names + ")";
  if (!remaining.empty()) return "unknown option '" + remaining.front() + "'";
  return "a command is required (commands: " + names + ")";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ibat: ask ibatd for InfiniBand paths, and manage its cache and neighbour table.", "ibat"};
  app.require_subcommand(1);
  app.fallthrough();  // inherited by the commands: global options may follow the command too
  app.set_version_flag("--version", std::string("ibat " IBAT_VERSION));
  std::string socket = ibat_default_socket();
  auto* socket_opt =
      app.add_option("--socket", socket, "ibatd's socket (default: $IBAT_SOCKET, else " IBAT_DEFAULT_SOCKET ")")
          ->type_name("PATH");

  ResolveArgs resolve;
  auto* resolve_cmd = app.add_subcommand("resolve", "Resolve a destination to a path record");
  auto* target = resolve_cmd->add_option_group("target", "the destination (exactly one)");
  target->add_option("--dgid", resolve.dgid, "destination GID")->type_name("GID");
  target->add_option("--dlid", resolve.dlid, "destination LID")->type_name("LID");
  target->add_option("--ip", resolve.ip, "destination IP address (through ibatd's neighbour table)")->type_name("ADDR");
  target->add_option("--hw", resolve.hw, "destination IPoIB hardware address")->type_name("HWADDR");
  target->require_option(1);
  resolve_cmd->add_option("--sgid", resolve.sgid, "source GID (default: the default port's)")->type_name("GID");
  resolve_cmd->add_option("--port", resolve.port, "resolve from this port (see 'ibat ports'): its GID is the source")
      ->type_name("CA:PORT");
  resolve_cmd->add_option("--pkey", resolve.pkey, "P_Key (default: ibatd's default_pkey)")->type_name("P");
  resolve_cmd->add_option("--timeout", resolve.timeout, "deadline in milliseconds, 1 to 3600000 (default: ibatd's)")
      ->type_name("MS");
  resolve_cmd->add_option("--service-id", resolve.service_id,
                          "ServiceID the SM's QoS policy may answer by (rdma_cm's: port space << 16 + port, "
                          "e.g. 0x1060cbc for iSER); asked with it when ibatd's qos_service_ids name it")
      ->type_name("ID");
  resolve_cmd->add_option("--qos-class", resolve.qos_class,
                          "QoS class (0-4095), asked with it when ibatd's qos_classes name it")
      ->type_name("N");
  resolve_cmd->add_option("--tclass", resolve.tclass, "traffic class (0-255), echoed in the path")->type_name("N");
  resolve_cmd->add_flag("--cache-only", resolve.cache_only, "answer from the cache only, never ask the SA");
  resolve_cmd->add_flag("--force-sa", resolve.force_sa, "ignore the cache and wait for a fresh SA answer");
  resolve_cmd->add_flag("--verify", resolve.verify,
                        "also ask the SA afresh, past the cache, and print both answers field by field and "
                        "whether they agree (exit 20 when they differ)");
  resolve_cmd->add_flag("--json", resolve.json, "print one JSON object");

  bool paths_json = false;
  std::string paths_port, paths_dgid;
  auto* paths_cmd = app.add_subcommand("paths", "List the path cache");
  paths_cmd->add_flag("--json", paths_json, "print a JSON array");
  paths_cmd->add_option("--port", paths_port, "only the paths from this port (see 'ibat ports')")->type_name("CA:PORT");
  paths_cmd->add_option("--dgid", paths_dgid, "only the paths to this GID")->type_name("GID");

  bool ports_json = false;
  auto* ports_cmd = app.add_subcommand("ports", "List the HCA ports ibatd serves");
  ports_cmd->add_flag("--json", ports_json, "print a JSON array");

  bool health_json = false;
  std::string health_timeout;
  auto* health_cmd = app.add_subcommand(
      "health",
      "Exit 0 when every port is active with its SM and SA answering; else 18 and a line per port, "
      "or 19 and one line when ibatd does not answer within --timeout or is not running");
  health_cmd->add_flag("--json", health_json, "print one JSON object");
  health_cmd
      ->add_option("--timeout", health_timeout,
                   "seconds to wait for ibatd, 0.001 to 3600 (default: " + std::to_string(kHealthTimeoutSeconds) + ")")
      ->type_name("SECONDS");

  bool stats_json = false, stats_prom = false;
  auto* stats_cmd = app.add_subcommand("stats", "Show ibatd's counters");
  stats_cmd->add_flag("--json", stats_json, "print one JSON object");
  stats_cmd->add_flag("--prometheus", stats_prom, "print Prometheus text exposition format");

  bool config_json = false;
  auto* config_cmd = app.add_subcommand("config", "Show ibatd's running configuration (every key, after reloads)");
  config_cmd->add_flag("--json", config_json, "print a JSON array of {key, value, reloadable}");

  std::string flush_dgid, flush_pkey, flush_port;
  auto* flush_cmd = app.add_subcommand("flush", "Drop cached paths (all, or those to one destination)");
  flush_cmd->add_option("--dgid", flush_dgid, "only paths to this GID")->type_name("GID");
  flush_cmd->add_option("--pkey", flush_pkey, "only this P_Key of --dgid")->type_name("P");
  flush_cmd->add_option("--port", flush_port, "only the paths from this port (see 'ibat ports')")->type_name("CA:PORT");

  auto* neigh_cmd = app.add_subcommand("neigh", "Manage the neighbour (IP to IPoIB address) table");
  neigh_cmd->require_subcommand(1);
  std::string neigh_ip, neigh_hw, neigh_slid, replay_file;
  auto* neigh_add = neigh_cmd->add_subcommand("add", "Add or replace a neighbour");
  neigh_add->add_option("IP", neigh_ip, "IP address")->required()->type_name("");
  neigh_add->add_option("HWADDR", neigh_hw, "IPoIB hardware address (20 hex bytes)")->required()->type_name("");
  neigh_add->add_option("--slid", neigh_slid, "source LID seen from it: builds a provisional path")->type_name("LID");
  auto* neigh_del = neigh_cmd->add_subcommand("del", "Remove a neighbour");
  neigh_del->add_option("IP", neigh_ip, "IP address")->required()->type_name("");
  bool neigh_json = false;
  auto* neigh_list = neigh_cmd->add_subcommand("list", "List neighbours");
  neigh_list->add_flag("--json", neigh_json, "print a JSON array");
  auto* neigh_replay = neigh_cmd->add_subcommand("replay", "Add the sender of every IPoIB ARP packet in a capture");
  neigh_replay->add_option("FILE", replay_file, "pcap file (Linux cooked or IPoIB link type)")->required()->type_name("");

  bool watch_json = false;
  auto* watch_cmd = app.add_subcommand("watch", "Print ibatd's events as they happen, one per line");
  watch_cmd->add_flag("--json", watch_json, "print JSON lines");
  app.footer(exit_code_help());  // after the commands, which would otherwise inherit it

  g_json_errors = json_wanted(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string problem = command_problem(app);
    return fail_usage(command_name(app), problem.empty() ? e.what() : problem);
  }

  const std::string command = command_name(app);
  if (socket_opt->count() > 0 && socket.empty())
    return fail_usage(command, "--socket is empty: give ibatd's socket path, e.g. " IBAT_DEFAULT_SOCKET);
  try {
    if (resolve_cmd->parsed()) return run_resolve(socket, resolve);
    if (paths_cmd->parsed()) return run_paths(socket, paths_json, paths_port, paths_dgid);
    if (config_cmd->parsed()) return run_config(socket, config_json);
    if (ports_cmd->parsed()) return run_ports(socket, ports_json);
    if (health_cmd->parsed()) return run_health(socket, health_json, health_timeout);
    if (stats_cmd->parsed()) return run_stats(socket, stats_json, stats_prom);
    if (flush_cmd->parsed()) return run_flush(socket, flush_dgid, flush_pkey, flush_port);
    if (neigh_add->parsed()) return run_neigh_add(socket, neigh_ip, neigh_hw, neigh_slid);
    if (neigh_del->parsed()) return run_neigh_del(socket, neigh_ip);
    if (neigh_list->parsed()) return run_neigh_list(socket, neigh_json);
    if (neigh_replay->parsed()) return run_neigh_replay(socket, replay_file);
    if (watch_cmd->parsed()) return run_watch(socket, watch_json);
  } catch (const UsageError& e) {
    return fail_usage(command, e.what());
  } catch (const CommandError& e) {
    return fail(e.code, "ibat " + command, e.what());
  }
  return fail_usage(command, "no command given");
}
