// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-bench: option parsing (CLI11).
#include "tools/bench/options.h"

#include <CLI/CLI.hpp>

namespace ibat::bench {

std::optional<Options> parse_options(int argc, char** argv, int& exit_code) {
  Options o;
  o.socket = ibat_default_socket();
  CLI::App app{"ibat-bench: measures a running ibatd through libibat: pipelined cached resolves per "
               "second (one connection), the latency of one cached resolve (p50/p99), and forced SA "
               "round trips (FORCE_SA, at most one in flight per destination) per second."};
  app.add_option("--socket", o.socket, "ibatd's native socket (default: $IBAT_SOCKET, else " IBAT_DEFAULT_SOCKET ")")
      ->type_name("PATH");
  app.add_option("--dgids", o.dgid_text, "destination GIDs that exist (comma-separated or repeated)")
      ->delimiter(',')
      ->required();
  app.add_option("--cached-seconds", o.cached_seconds, "length of the cached throughput run")
      ->check(CLI::Range(0.1, 600.0));
  app.add_option("--depth", o.depth, "requests outstanding in the cached run")->check(CLI::Range(1u, 1024u));
  app.add_option("--latency-samples", o.latency_samples, "single cached resolves timed one by one")
      ->check(CLI::Range(100u, 10'000'000u));
  app.add_option("--uncached-seconds", o.uncached_seconds, "length of the forced-SA run")
      ->check(CLI::Range(0.1, 600.0));
  app.add_option("--uncached-depth", o.uncached_depth,
                 "forced-SA requests outstanding (default and maximum: one per destination)")
      ->check(CLI::Range(1u, 1024u));
  app.add_flag("--json", o.json, "print one JSON object");
  try {
    app.parse(argc, argv);
    for (const auto& text : o.dgid_text) {
      ibat_gid gid{};
      if (ibat_parse_gid(text.c_str(), &gid) != IBAT_OK)
        throw CLI::ValidationError("--dgids", "not a GID: '" + text + "'");
      ibat_target t{};
      t.type = IBAT_TARGET_GID;
      t.u.gid = gid;
      o.dgids.push_back(t);
    }
    if (o.uncached_depth == 0 || o.uncached_depth > o.dgids.size())
      o.uncached_depth = static_cast<unsigned>(o.dgids.size());
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e);
    return std::nullopt;
  }
  return o;
}

}  // namespace ibat::bench
