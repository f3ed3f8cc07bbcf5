// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-load: option parsing (CLI11) and the destination file reader.
#include "tools/load/options.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <CLI/CLI.hpp>

namespace ibat::load {
namespace {

const std::vector<std::string> kReasons{"timeout",  "unreachable", "no-record",   "overloaded",
                                        "cancelled", "invalid",    "disconnected", "protocol"};

Destination parse_destination(const std::string& text, const std::string& where) {
  Destination d;
  std::istringstream fields(text);
  std::string target, lid, field;
  fields >> target;
  while (fields >> field) {
    if (field.rfind("from=", 0) == 0) {  // the source GID: the port of a multi-port host that asks
      ibat_target source{};
      if (ibat_parse_target(field.c_str() + 5, &source) != IBAT_OK || source.type != IBAT_TARGET_GID)
        throw CLI::ValidationError(where, "not a source GID: '" + field + "'");
      d.sgid = source.u.gid;
    } else if (lid.empty()) {
      lid = field;
    } else {
      throw CLI::ValidationError(where, "unexpected field '" + field + "' (use: TARGET [DLID] [from=SGID])");
    }
  }
  if (ibat_parse_target(target.c_str(), &d.target) != IBAT_OK)
    throw CLI::ValidationError(where, "not a GID, LID, IP or hardware address: '" + target + "'");
  d.text = target;
  if (!lid.empty()) {
    ibat_target parsed{};
    if (ibat_parse_lid(lid.c_str(), &parsed) != IBAT_OK)
      throw CLI::ValidationError(where, "not a LID: '" + lid + "'");
    d.dlid = parsed.u.lid;
  }
  return d;
}

// One destination per line: "TARGET [DLID] [from=SGID]"; blank lines and lines starting with '#' are skipped.
void read_destinations(const std::string& path, std::vector<Destination>& out) {
  std::ifstream in(path);
  if (!in) throw CLI::ValidationError("--dgids", "cannot read '" + path + "'");
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    out.push_back(parse_destination(line, path + ":" + std::to_string(number)));
  }
}

}  // namespace

std::optional<Options> parse_options(int argc, char** argv, int& exit_code) {
  Options o;
  std::vector<std::string> dgid_files, dgids;
  bool allow_timeouts = false;
  CLI::App app{"ibat-load: resolves destinations through ibatd at a steady load and accounts for "
               "every request (sent, answered exactly once, DLID never 0). Prints a JSON summary; "
               "exits 1 if an invariant is violated, 2 on a usage or connection error."};
  app.add_option("--socket", o.sockets, "ibatd socket (repeatable; connections are spread over them)")
      ->required();
  app.add_option("--dgids", dgid_files, "file of destinations, one per line: TARGET [EXPECTED_DLID] [from=SOURCE_GID]");
  app.add_option("--dgid", dgids, "a destination (GID, LID, IP; repeatable)");
  app.add_option("--connections", o.connections, "connections in all")->check(CLI::Range(1u, 60000u));
  app.add_option("--depth", o.depth, "requests outstanding per connection")->check(CLI::Range(1u, 1024u));
  auto* duration = app.add_option("--duration", o.duration_s, "seconds to send for")->check(CLI::PositiveNumber);
  auto* count = app.add_option("--count", o.count, "requests to send in all")->check(CLI::PositiveNumber);
  app.add_option("--rate", o.rate, "requests per second over all connections (default: unpaced)")
      ->check(CLI::PositiveNumber);
  app.add_option("--timeout-ms", o.timeout_ms, "per-request deadline (default: the daemon's)");
  app.add_option("--uncached-share", o.uncached_share,
                 "share of requests that bypass the cache (FORCE_SA), 0..1")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--drain-ms", o.drain_ms,
                 "wait this long for outstanding answers after the last send (default: timeout + 5 s)");
  app.add_option("--disconnect-every", o.disconnect_every,
                 "close each connection with requests in flight after this many sends, then reopen it");
  app.add_flag("--reconnect", o.reconnect, "reopen broken connections (e.g. across a daemon restart)");
  app.add_flag("--expect-exists", o.expect_exists, "every destination exists: any failure is a violation");
  app.add_flag("--allow-timeouts", allow_timeouts, "with --expect-exists: `timeout` failures are counted, not violations");
  app.add_option("--allow-failure", o.allowed_failures, "with --expect-exists: another reason that is not a violation")
      ->check(CLI::IsMember(kReasons));
  app.add_flag("--json", o.json, "print only the JSON summary (default: JSON plus a one-line verdict on stderr)");
  try {
    app.parse(argc, argv);
    if (duration->count() == 0 && count->count() == 0)
      throw CLI::ValidationError("--duration/--count", "give at least one of them");
    for (const auto& file : dgid_files) read_destinations(file, o.destinations);
    for (const auto& text : dgids) o.destinations.push_back(parse_destination(text, "--dgid"));
    if (o.destinations.empty()) throw CLI::ValidationError("--dgids/--dgid", "no destinations");
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e);
    if (exit_code != 0) exit_code = 2;
    return std::nullopt;
  }
  if (allow_timeouts) o.allowed_failures.emplace_back("timeout");
  if (o.drain_ms == 0) o.drain_ms = (o.timeout_ms ? o.timeout_ms : 5000) + 5000;
  return o;
}

}  // namespace ibat::load
