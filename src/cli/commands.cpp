// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The ibat CLI commands (see commands.h).
#include "cli/commands.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/deadline.h"
#include "cli/exit_codes.h"
#include "cli/render.h"
#include "ibat.h"
#include "ipoib/capture_file.h"
#include "ipoib/pcap.h"

namespace ibat::cli {
namespace {

using nlohmann::json;

struct Closer {
  void operator()(ibat_t* h) const { ibat_close(h); }
};
using Handle = std::unique_ptr<ibat_t, Closer>;

Handle connect(const std::string& socket) {
  ibat_t* h = nullptr;
  if (ibat_open(socket.c_str(), &h) == IBAT_OK) return Handle(h);
  int err = errno;
  std::string hint = err == EACCES ? "check the socket's permissions, or run as root"
                                   : "is ibatd running? start it with 'systemctl start ibatd' or pass --socket";
  throw CommandError(kExitConnect, "cannot connect to " + socket + ": " + std::strerror(err) + " (" + hint + ")");
}

// What to do next, for a status whose ibat_strerror() text does not already say it.
std::string_view hint_for(int status) {
  switch (status) {
    case IBAT_ETIMEOUT: return "check the subnet manager with 'sminfo', or retry with a larger --timeout";
    case IBAT_ENORECORD: return "the subnet administrator knows no such destination; check it with 'saquery'";
    case IBAT_EINVALID: return "check the GID, LID and P_Key values";
    case IBAT_EUNSUPPORTED: return "ibatd is older than this ibat; upgrade it";
    case IBAT_EDISCONNECTED: return "ibatd went away; see 'journalctl -u ibatd'";
    default: return {};
  }
}

// A command's own wording for one status: replaces ibat_strerror() and the generic hint (and,
// when exit_code is not 0, the status's exit code).
struct Advice {
  int status = IBAT_OK;
  std::string reason;
  std::string hint;
  int exit_code = 0;
};

// Throws the CommandError for a failed request: "what: reason (ibatd says: ...) (hint)", with at
// most one hint.
void check(ibat_t* h, int status, const std::string& what, const Advice& advice = {}) {
  if (status == IBAT_OK) return;
  bool own = advice.status == status;
  std::string message = what + ": " + (own ? advice.reason : std::string(ibat_strerror(status)));
  std::string detail = ibat_last_message(h);
  if (!detail.empty() && status != IBAT_EDISCONNECTED) message += " (ibatd says: " + detail + ")";
  std::string hint = own ? advice.hint : std::string(hint_for(status));
  if (!hint.empty()) message += " (" + hint + ")";
  throw CommandError(own && advice.exit_code != 0 ? advice.exit_code : exit_code_for(status), message);
}

ibat_gid parse_gid(const std::string& option, const std::string& text) {
  ibat_gid gid{};
  if (ibat_parse_gid(text.c_str(), &gid) != IBAT_OK)
    throw UsageError(option + " '" + text + "' is not a GID (expected e.g. fe80::2:c903:a:1)");
  return gid;
}

ibat_target parse_ip(const std::string& option, const std::string& text) {
  ibat_target t{};
  if (ibat_parse_ip(text.c_str(), &t) != IBAT_OK)
    throw UsageError(option + " '" + text + "' is not an IPv4 or IPv6 address");
  return t;
}

ibat_target parse_hw(const std::string& option, const std::string& text) {
  ibat_target t{};
  if (ibat_parse_hw(text.c_str(), &t) != IBAT_OK)
    throw UsageError(option + " '" + text +
                     "' is not an IPoIB hardware address (expected 20 colon-separated hex bytes, e.g. "
                     "80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:00:01)");
  return t;
}

std::uint16_t parse_lid(const std::string& option, const std::string& text) {
  ibat_target t{};
  if (ibat_parse_lid(text.c_str(), &t) != IBAT_OK)
    throw UsageError(option + " '" + text + "' is not a unicast LID (1..49151, decimal or 0x-hex)");
  return t.u.lid;
}

std::uint16_t parse_pkey(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  unsigned long v = std::strtoul(text.c_str(), &end, 0);
  if (text.empty() || *end != '\0' || errno != 0 || v > 0xFFFF || (v & 0x7FFF) == 0)
    throw UsageError(option + " '" + text + "' is not a P_Key (expected e.g. 0xffff or 0x8001; low 15 bits not 0)");
  return static_cast<std::uint16_t>(v);
}

std::uint32_t parse_timeout(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text.front() == '-' || *end != '\0' || errno != 0 || v < 1 || v > 3'600'000)
    throw UsageError(option + " '" + text + "' is not a number of milliseconds from 1 to 3600000 (e.g. 500)");
  return static_cast<std::uint32_t>(v);
}

// An unsigned number (decimal or 0x-hex) of at most `max`; `what` says what the option takes.
std::uint64_t parse_unsigned(const std::string& option, const std::string& text, std::uint64_t max,
                             const std::string& what) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (text.empty() || text.front() == '-' || *end != '\0' || errno != 0 || v > max)
    throw UsageError(option + " '" + text + "' is not " + what);
  return v;
}

// `--timeout` of ibat health: seconds, fractions allowed.
double parse_seconds(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(v >= 0.001 && v <= 3600))
    throw UsageError(option + " '" + text + "' is not a number of seconds from 0.001 to 3600 (e.g. 5 or 0.5)");
  return v;
}

json fetch_json(ibat_t* h, int listing, const std::string& what, const Advice& advice = {}) {
  char* text = nullptr;
  check(h, ibat_query_json(h, listing, &text), what, advice);
  std::unique_ptr<char, decltype(&ibat_free)> owned(text, &ibat_free);
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) throw CommandError(kExitFailure, what + ": ibatd sent a reply that is not JSON");
  return doc;
}

// The GID of the port `name` ("mlx5_0:1") as ibatd lists it; a port it does not serve is a usage error.
std::string port_gid(ibat_t* h, const std::string& name) {
  json stats = fetch_json(h, IBAT_LIST_STATS, "cannot read the ports");
  std::string list;
  for (const json& p : stats.value("ports", json::array())) {
    if (p.value("name", "") == name) return p.value("gid", "");
    list += (list.empty() ? "" : ", ") + p.value("name", "");
  }
  throw UsageError("--port " + name + ": ibatd serves no such port (it serves " + list + ")");
}

}  // namespace

int run_resolve(const std::string& socket, const ResolveArgs& args) {
  if (args.cache_only && args.force_sa)
    throw UsageError("--cache-only and --force-sa contradict each other: give at most one");
  if (args.verify && (args.cache_only || args.force_sa))
    throw UsageError(std::string("--verify asks the cache and then the SA: it does not take ") +
                     (args.cache_only ? "--cache-only" : "--force-sa"));
  if (!args.sgid.empty() && !args.port.empty())
    throw UsageError("--sgid and --port both name the source: give at most one");
  ibat_target target{};
  std::string shown;
  if (!args.dgid.empty()) {
    target.type = IBAT_TARGET_GID;
    target.u.gid = parse_gid("--dgid", args.dgid);
    shown = args.dgid;
  } else if (!args.dlid.empty()) {
    target.type = IBAT_TARGET_LID;
    target.u.lid = parse_lid("--dlid", args.dlid);
    shown = "LID " + args.dlid;
  } else if (!args.ip.empty()) {
    target = parse_ip("--ip", args.ip);
    shown = args.ip;
  } else {
    target = parse_hw("--hw", args.hw);
    shown = args.hw;
  }
  ibat_resolve_opts opts{};
  if (!args.sgid.empty()) {
    opts.flags |= IBAT_RESOLVE_SGID;
    opts.sgid = parse_gid("--sgid", args.sgid);
  }
  if (!args.pkey.empty()) {
    opts.flags |= IBAT_RESOLVE_PKEY;
    opts.pkey = parse_pkey("--pkey", args.pkey);
  }
  if (args.cache_only) opts.flags |= IBAT_RESOLVE_CACHE_ONLY;
  if (args.force_sa) opts.flags |= IBAT_RESOLVE_FORCE_SA;
  if (!args.timeout.empty()) opts.timeout_ms = parse_timeout("--timeout", args.timeout);
  ResolveContext context;
  if (!args.service_id.empty()) {
    context.service_id = parse_unsigned("--service-id", args.service_id, UINT64_MAX,
                                        "a 64-bit ServiceID (e.g. 0x1060cbc, iSER's)");
    ibat_opts_set_service_id(&opts, *context.service_id);
  }
  if (!args.qos_class.empty()) {
    opts.flags |= IBAT_RESOLVE_QOS_CLASS;
    opts.qos_class = static_cast<std::uint16_t>(
        parse_unsigned("--qos-class", args.qos_class, 0xFFF, "a QoS class from 0 to 4095"));
    context.qos_class = opts.qos_class;
  }
  if (!args.tclass.empty()) {
    opts.flags |= IBAT_RESOLVE_TCLASS;
    opts.tclass = static_cast<std::uint8_t>(parse_unsigned("--tclass", args.tclass, 0xFF, "a traffic class from 0 to 255"));
    context.tclass = opts.tclass;
  }

  Handle h = connect(socket);
  if (!args.port.empty()) {
    opts.flags |= IBAT_RESOLVE_SGID;
    opts.sgid = parse_gid("--port", port_gid(h.get(), args.port));
  }
  ibat_path path{};
  Advice advice;
  if (args.cache_only) {
    advice = {IBAT_ENORECORD, "no usable path in ibatd's cache (--cache-only never asks the subnet administrator)",
              "run without --cache-only to ask it"};
  } else if (!args.ip.empty()) {
    advice = {IBAT_EUNREACHABLE, ibat_strerror(IBAT_EUNREACHABLE),
              "if 'ibat neigh list' does not show " + args.ip + ", add it with 'ibat neigh add'"};
  } else {
    advice = {IBAT_EUNREACHABLE, ibat_strerror(IBAT_EUNREACHABLE),
              "check the local port with 'ibstat' and the destination with 'saquery'"};
  }
  // Through the socket, never the shared table: ibatd's reply says where its path came from.
  ibat_path_explain explain{};
  check(h.get(), ibat_resolve_explain(h.get(), &target, &opts, &path, &explain), "cannot resolve " + shown, advice);
  context.explain = &explain;
  if (!args.verify) {
    std::cout << (args.json ? path_json(path, context).dump() + "\n" : path_text(path, context));
    return kExitOk;
  }
  // The same question again, past the cache: the SA's answer now (ib_acme -v's check).
  ibat_resolve_opts fresh_opts = opts;
  fresh_opts.flags |= IBAT_RESOLVE_FORCE_SA;
  ibat_path fresh{};
  ibat_path_explain fresh_explain{};
  check(h.get(), ibat_resolve_explain(h.get(), &target, &fresh_opts, &fresh, &fresh_explain),
        "cannot verify " + shown + " with the subnet administrator",
        {IBAT_ENORECORD, "the subnet administrator has no path now, though ibatd had one cached",
         "check the destination with 'saquery'", kExitDisagree});
  ResolveContext fresh_context = context;
  fresh_context.explain = &fresh_explain;
  const bool agree = differing_fields(path, fresh).empty();
  std::cout << (args.json ? verify_json(path, context, fresh, fresh_context).dump() + "\n"
                          : verify_text(path, context, fresh));
  return agree ? kExitOk : kExitDisagree;
}

int run_paths(const std::string& socket, bool as_json, const std::string& port, const std::string& dgid_text) {
  std::string dgid;  // as ibatd prints GIDs
  if (!dgid_text.empty()) {
    char buf[64];
    const ibat_gid gid = parse_gid("--dgid", dgid_text);
    ibat_format_gid(&gid, buf, sizeof buf);
    dgid = buf;
  }
  Handle h = connect(socket);
  json entries = fetch_json(h.get(), IBAT_LIST_PATHS, "cannot list paths");
  if (!dgid.empty()) {
    json kept = json::array();
    for (const json& e : entries) {
      ibat_gid gid{};
      char buf[64] = "";
      if (ibat_parse_gid(e.value("dgid", "").c_str(), &gid) == IBAT_OK) ibat_format_gid(&gid, buf, sizeof buf);
      if (dgid == buf) kept.push_back(e);
    }
    entries = std::move(kept);
  }
  if (!port.empty()) {
    const std::string gid = port_gid(h.get(), port);
    json kept = json::array();
    for (const json& e : entries)
      if (e.value("sgid", "") == gid) kept.push_back(e);
    entries = std::move(kept);
  }
  std::cout << (as_json ? entries.dump() + "\n" : paths_table(entries));
  return kExitOk;
}

int run_stats(const std::string& socket, bool as_json, bool prometheus) {
  if (as_json && prometheus) throw UsageError("--json and --prometheus exclude each other: give at most one");
  Handle h = connect(socket);
  json stats = fetch_json(h.get(), IBAT_LIST_STATS, "cannot read statistics");
  std::cout << (as_json ? stats.dump() + "\n" : prometheus ? stats_prometheus(stats) : stats_text(stats));
  return kExitOk;
}

int run_config(const std::string& socket, bool as_json) {
  Handle h = connect(socket);
  json stats = fetch_json(h.get(), IBAT_LIST_STATS, "cannot read ibatd's configuration");
  auto config = stats.find("config");
  if (config == stats.end() || !config->is_array())
    throw CommandError(kExitUnsupported, "cannot read ibatd's configuration: this ibatd does not report it "
                                         "(an ibatd older than this ibat; upgrade it)");
  std::cout << (as_json ? config->dump() + "\n" : config_text(*config));
  return kExitOk;
}

int run_ports(const std::string& socket, bool as_json) {
  Handle h = connect(socket);
  json stats = fetch_json(h.get(), IBAT_LIST_STATS, "cannot read the ports");
  std::cout << (as_json ? stats.value("ports", json::array()).dump() + "\n" : ports_table(stats));
  return kExitOk;
}

namespace {
// What keeps one port (an entry of stats "ports") from serving jobs; empty: nothing.
std::vector<std::string> port_problems(const json& p) {
  std::vector<std::string> problems;
  const std::string state = p.value("state", "");
  if (state == "link_down") problems.push_back("link down (check the cable and `ibstat`)");
  else if (state != "active") problems.push_back("not active (" + state + "): the SM has not brought it up");
  if (p.value("sm_lid", 0) == 0) problems.push_back("no SM (SM LID 0): is OpenSM running on this subnet?");
  if (p.contains("sa_silent_s") && p["sa_silent_s"].is_number()) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", p["sa_silent_s"].get<double>());
    problems.push_back(std::string("SA not answering for ") + seconds + " s");
  }
  return problems;
}
}  // namespace

namespace {
// Connects for `ibat health`: no daemon to ask is kExitNoAnswer, saying what to do.
Handle connect_for_health(const std::string& socket) {
  ibat_t* h = nullptr;
  if (ibat_open(socket.c_str(), &h) == IBAT_OK) return Handle(h);
  const int err = errno;
  const std::string where = "socket " + socket + ": " + std::strerror(err);
  if (err == ENOENT || err == ECONNREFUSED)
    throw CommandError(kExitNoAnswer, "ibatd is not running (" + where +
                                          ") (start it with 'systemctl start ibatd', or pass --socket)");
  throw CommandError(kExitNoAnswer, "cannot reach ibatd (" + where + ")" +
                                        (err == EACCES ? " (check the socket's permissions, or run as root)" : ""));
}
}  // namespace

int run_health(const std::string& socket, bool as_json, const std::string& timeout) {
  const double seconds = timeout.empty() ? kHealthTimeoutSeconds : parse_seconds("--timeout", timeout);
  std::ostringstream shown;
  shown << seconds;
  const std::string late = "ibat health: ibatd did not answer within " + shown.str() + " s (socket " + socket + ")";
  Deadline deadline(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(seconds)),
                    late + "\n", kExitNoAnswer, as_json ? error_json(kExitNoAnswer, late).dump() + "\n" : std::string());
  Handle h = connect_for_health(socket);
  json stats = fetch_json(h.get(), IBAT_LIST_STATS, "no answer from ibatd (socket " + socket + ")",
                          {IBAT_EDISCONNECTED, "it closed the connection", "see 'journalctl -u ibatd'", kExitNoAnswer});
  deadline.disarm();
  json report = json::array();
  bool healthy = true;
  std::string lines;
  std::size_t count = 0;
  for (const json& p : stats.value("ports", json::array())) {
    ++count;
    std::vector<std::string> problems = port_problems(p);
    healthy = healthy && problems.empty();
    report.push_back({{"port", p.value("name", "")}, {"healthy", problems.empty()}, {"problems", problems}});
    for (const std::string& problem : problems) lines += p.value("name", "") + ": " + problem + "\n";
  }
  if (count == 0 && !stats.contains("ports")) {
    healthy = false;
    lines = "ibatd reports no ports (an ibatd older than this ibat?)\n";
  } else if (count == 0) {
    healthy = false;
    lines = "ibatd serves no port: no InfiniBand HCA is present (removed, or its driver not loaded)\n";
  }
  if (as_json) {
    std::cout << json{{"healthy", healthy}, {"ports", report}}.dump() << "\n";
  } else {
    std::cout << (healthy ? "ok: " + std::to_string(count) + " port" + (count == 1 ? "" : "s") +
                                " active, with their SM and SA answering\n"
                          : lines);
  }
  return healthy ? kExitOk : kExitUnhealthy;
}

int run_flush(const std::string& socket, const std::string& dgid_text, const std::string& pkey_text,
              const std::string& port) {
  if (dgid_text.empty() && !pkey_text.empty()) throw UsageError("--pkey needs --dgid");
  std::optional<ibat_gid> dgid;
  if (!dgid_text.empty()) dgid = parse_gid("--dgid", dgid_text);
  std::uint16_t pkey = pkey_text.empty() ? 0 : parse_pkey("--pkey", pkey_text);
  Handle h = connect(socket);
  std::optional<ibat_gid> sgid;
  if (!port.empty()) sgid = parse_gid("--port", port_gid(h.get(), port));
  std::uint32_t dropped = 0;
  check(h.get(), ibat_flush_port(h.get(), sgid ? &*sgid : nullptr, dgid ? &*dgid : nullptr, pkey, &dropped),
        "cannot flush");
  std::string count = dropped == UINT32_MAX ? "cached paths" : std::to_string(dropped) + (dropped == 1 ? " cached path" : " cached paths");
  std::cout << "flushed " << count << (dgid ? " to " + dgid_text : std::string()) << (port.empty() ? "" : " from " + port)
            << "\n";
  return kExitOk;
}

int run_neigh_add(const std::string& socket, const std::string& ip_text, const std::string& hw_text,
                  const std::string& slid_text) {
  ibat_target ip = parse_ip("IP", ip_text);
  ibat_target hw = parse_hw("HWADDR", hw_text);
  if (std::all_of(hw.u.hw + 4, hw.u.hw + 20, [](std::uint8_t b) { return b == 0; }))
    throw UsageError("HWADDR '" + hw_text + "' has a zero GID (its last 16 bytes): give the neighbour's port GID");
  std::uint16_t slid = slid_text.empty() ? 0 : parse_lid("--slid", slid_text);
  Handle h = connect(socket);
  check(h.get(), ibat_neigh_add(h.get(), &ip, hw.u.hw, slid), "cannot add neighbour " + ip_text);
  return kExitOk;
}

int run_neigh_del(const std::string& socket, const std::string& ip_text) {
  ibat_target ip = parse_ip("IP", ip_text);
  Handle h = connect(socket);
  check(h.get(), ibat_neigh_del(h.get(), &ip), "cannot delete neighbour " + ip_text,
        {IBAT_EUNREACHABLE, "ibatd has no neighbour entry for it", "see 'ibat neigh list'"});
  return kExitOk;
}

int run_neigh_list(const std::string& socket, bool as_json) {
  Handle h = connect(socket);
  json neighbours = fetch_json(h.get(), IBAT_LIST_NEIGH, "cannot list neighbours");
  std::cout << (as_json ? neighbours.dump() + "\n" : neighbours_table(neighbours));
  return kExitOk;
}

int run_neigh_replay(const std::string& socket, const std::string& file) {
  auto bytes = ipoib::read_capture_file(file);
  if (auto* err = std::get_if<ipoib::DecodeError>(&bytes))
    throw CommandError(kExitFailure, err->message);  // names the file
  auto scanned = ipoib::scan_pcap_arp(std::get<std::vector<std::uint8_t>>(bytes));
  if (auto* err = std::get_if<ipoib::DecodeError>(&scanned))
    throw CommandError(kExitFailure, file + " is not a usable pcap capture: " + err->message);
  const auto& scan = std::get<ipoib::PcapArpScan>(scanned);
  for (const auto& rejected : scan.rejected) std::cerr << "ibat: " << file << ": skipped " << rejected << "\n";
  Handle h = connect(socket);
  for (const auto& arp : scan.arp) {
    auto update = ipoib::neighbour_update(arp.packet);
    ibat_target ip{};
    ibat_parse_ip(update.ip.to_string().c_str(), &ip);
    check(h.get(), ibat_neigh_add(h.get(), &ip, update.hw.raw.data(), 0),
          "cannot add neighbour " + update.ip.to_string() + " (record " + std::to_string(arp.record) + ")");
  }
  std::cout << "replayed " << scan.arp.size() << " ARP packets from " << file << " (" << scan.records
            << " records, " << scan.not_ipoib_arp << " not IPoIB ARP, " << scan.rejected.size()
            << " malformed)\n";
  return kExitOk;
}

int run_watch(const std::string& socket, bool as_json) {
  Handle h = connect(socket);
  auto print = [](void* user, const char* event) -> int {
    bool json_lines = *static_cast<bool*>(user);
    if (json_lines) {
      std::cout << event << std::endl;
    } else {
      json doc = json::parse(event, nullptr, false);
      std::cout << (doc.is_object() ? event_text(doc) : std::string(event)) << std::endl;
    }
    return std::cout ? 0 : 1;  // stop when stdout is gone (e.g. a closed pipe)
  };
  check(h.get(), ibat_watch(h.get(), print, &as_json), "watch ended");
  return kExitOk;
}

}  // namespace ibat::cli
