// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibatd: the ibat path resolution daemon. Parses flags and the TOML config, serves every HCA port
// it is given (all InfiniBand ports by default, host_ports.h: CAs that come and go included), runs
// the Service on one asio event loop, and handles SIGTERM/SIGINT (cancel pending requests, write
// the snapshot, exit 0) and SIGHUP (reload the config; a bad file keeps the old one). Under a
// Type=notify unit it tells systemd READY, RELOADING, STOPPING, its status and WATCHDOG pings.
// Exit codes (ibatd(8)): 0 clean stop or valid config, 1 invalid config or fatal error, 2 usage.
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "server/daemon/busy_poll.h"
#include "server/daemon/config.h"
#include "server/daemon/host_ports.h"
#include "server/daemon/logging.h"
#include "server/daemon/service.h"
#include "server/daemon/systemd_notifier.h"
#include "server/daemon/systemd_reporter.h"

namespace {

using namespace ibat;

struct Flags {
  std::string config_path{server::kDefaultConfigPath};
  bool config_given = false;
  bool check_config = false;
  server::ConfigOverrides overrides;
};

constexpr int kExitUsage = 2;

int fail_usage(const std::string& message) {
  std::fprintf(stderr, "ibatd: %s\nRun 'ibatd --help' for usage.\n", message.c_str());
  return kExitUsage;
}

server::ConfigResult load(const Flags& flags) {
  return server::load_config(flags.config_path, flags.config_given, flags.overrides, server::HostCheck::on);
}

int check_config(const Flags& flags) {
  server::ConfigResult result = load(flags);
  for (const auto& note : result.notes) std::printf("%s\n", note.c_str());
  for (const auto& error : result.errors) std::fprintf(stderr, "%s\n", error.c_str());
  if (!result.ok()) {
    std::fprintf(stderr, "%s: configuration is not valid (%zu error%s)\n", result.source.c_str(),
                 result.errors.size(), result.errors.size() == 1 ? "" : "s");
    return 1;
  }
  std::printf("%s: configuration OK\n", result.source.c_str());
  return 0;
}

int run(const Flags& flags, const server::DaemonConfig& config) {
  asio::io_context loop(1);
  server::SystemdNotifier notifier = server::SystemdNotifier::from_environment();
  const std::vector<server::Service::PortSpec> specs = server::choose_ports(config);
  server::Service service(loop, config, specs, server::fabric_port_factory(loop, config));
  service.start();  // and every port's fabric
  server::HostPortWatch watch(loop, config, specs, service);
  watch.start();
  server::SystemdReporter reporter(loop, notifier, [&] { return service.status_line(); });

  asio::signal_set stop_signals(loop, SIGTERM, SIGINT);
  asio::signal_set reload_signal(loop, SIGHUP);
  std::function<void()> wait_reload = [&] {
    reload_signal.async_wait([&](asio::error_code ec, int) {
      if (ec) return;
      spdlog::info("SIGHUP: reloading {}", flags.config_path);
      notifier.reloading();
      server::ConfigResult next = load(flags);
      if (next.ok()) {
        service.reload(next.config);
      } else {
        for (const auto& error : next.errors) spdlog::error("reload: {}", error);
        spdlog::error("reload failed: keeping the running configuration");
      }
      notifier.ready(service.status_line());
      wait_reload();
    });
  };
  wait_reload();
  stop_signals.async_wait([&](asio::error_code ec, int signal) {
    if (ec) return;
    spdlog::info("signal {}: stopping", signal);
    notifier.stopping();
    reporter.stop();
    reload_signal.cancel();
    watch.stop();
    service.shutdown([&] { loop.stop(); });
  });
  spdlog::info("ibatd {} running", IBAT_VERSION);
  // The sockets are bound and the ports opened: systemd may start what comes After=ibatd.
  notifier.ready(service.status_line());
  reporter.start();
  server::run_loop(loop);
  spdlog::info("ibatd stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{"ibatd: InfiniBand path resolution daemon (see ibatd(8))", "ibatd"};
  app.set_version_flag("--version", std::string("ibatd " IBAT_VERSION));
  app.add_option("--config", flags.config_path, "TOML configuration file")
      ->default_str(std::string(server::kDefaultConfigPath));
  app.add_flag("--check-config", flags.check_config, "validate the configuration and exit (0 valid, 1 not, 2 bad options)");
  auto& o = flags.overrides;
  app.add_option("--socket", o.socket, "native protocol socket (default /run/ibat/ibatd.sock)");
  app.add_option("--acm-socket", o.acm_socket, "ACM protocol socket (default /run/ibat/acm.sock; \"\" disables it)");
  app.add_option("--cache-file", o.cache_file, "warm-cache snapshot file (\"\" disables it)");
  app.add_option("--ca", o.ca, "serve only this HCA's port (default: every InfiniBand port of every HCA)");
  app.add_option("--port", o.port, "with --ca, its port number (default: its first active port)")->type_name("N");
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error, critical or off");
  app.footer("Exit codes: 0 clean stop or valid configuration, 1 invalid configuration or fatal error, 2 bad options.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail_usage(e.what());
  }
  flags.config_given = app.count("--config") > 0;
  // A bad option value is a usage error, not a fault of the file: check the options on their own.
  if (auto options = server::parse_config("", "options", flags.overrides); !options.ok())
    return fail_usage(options.errors.front());

  if (flags.check_config) return check_config(flags);

  server::ConfigResult result = load(flags);
  server::setup_logging(result.ok() ? result.config.log_level : "info");
  for (const auto& note : result.notes) spdlog::info("{}", note);
  if (!result.ok()) {
    for (const auto& error : result.errors) spdlog::critical("{}", error);
    return 1;
  }
  try {
    return run(flags, result.config);
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
