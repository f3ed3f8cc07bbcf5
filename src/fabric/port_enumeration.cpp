// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Port enumeration through libibumad and the pure choice of ports to serve (port_enumeration.h).
#include "fabric/port_enumeration.h"

#include <algorithm>

#include <infiniband/umad.h>

namespace ibat::fabric {

namespace {
constexpr int kIbPortActive = 4;  // IB_PORT_ACTIVE in umad_port_t::state

std::string joined_names(const std::vector<HcaPort>& ports) {
  std::string out;
  for (const HcaPort& p : ports) out += (out.empty() ? "" : ", ") + p.name();
  return out.empty() ? "none" : out;
}
}  // namespace

std::vector<HcaPort> enumerate_ports(std::string& error) {
  std::vector<HcaPort> out;
  if (umad_init() < 0) {
    error = "umad_init failed: is libibumad usable here?";
    return out;
  }
  char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
  const int count = umad_get_cas_names(names, UMAD_MAX_DEVICES);
  if (count < 0) {
    error = "umad_get_cas_names failed: no InfiniBand devices readable (check `ibstat`)";
    return out;
  }
  for (int i = 0; i < count; ++i) {
    umad_ca_t ca{};
    if (umad_get_ca(names[i], &ca) < 0) continue;  // gone between the two calls: not ours to serve
    for (int n = 1; n <= ca.numports && n < UMAD_CA_MAX_PORTS; ++n) {
      const umad_port_t* port = ca.ports[n];
      if (port == nullptr) continue;
      out.push_back(HcaPort{ca.ca_name, n, port->link_layer, port->state == kIbPortActive});
    }
    umad_release_ca(&ca);
  }
  return out;
}

std::optional<HcaPort> find_port(const std::string& ca, int number, std::string& error) {
  if (umad_init() < 0) {
    error = "umad_init failed: is libibumad usable here?";
    return std::nullopt;
  }
  umad_port_t info{};
  if (umad_get_port(ca.empty() ? nullptr : ca.c_str(), number, &info) < 0) {
    error = "cannot find InfiniBand " + (ca.empty() ? std::string("CA") : "CA " + ca) +
            (number == 0 ? std::string(" with an active port") : " port " + std::to_string(number)) +
            " (umad_get_port failed; check `ibstat`)";
    return std::nullopt;
  }
  HcaPort port{info.ca_name, info.portnum, info.link_layer, info.state == kIbPortActive};
  umad_release_port(&info);
  return port;
}

PortPlan plan_ports(const std::vector<HcaPort>& found, const std::vector<std::string>& wanted) {
  PortPlan plan;
  if (wanted.empty()) {
    for (const HcaPort& p : found) {
      if (p.infiniband()) plan.serve.push_back(p);
      else plan.skipped.push_back(p.name() + ": link layer " + p.link_layer + ", not served (no SA on it)");
    }
    if (plan.serve.empty())
      plan.error = "no InfiniBand port on this host (found: " + joined_names(found) + "); check `ibstat`";
    return plan;
  }
  for (const std::string& name : wanted) {
    std::vector<HcaPort> named;
    for (const HcaPort& p : found)
      if (p.name() == name || p.ca == name) named.push_back(p);
    if (named.empty()) {
      plan.error = "[fabric] ports: no port " + name + " on this host (found: " + joined_names(found) + ")";
      return plan;
    }
    for (const HcaPort& p : named) {
      if (!p.infiniband()) {
        if (p.name() == name) {
          plan.error = "[fabric] ports: " + name + " has link layer " + p.link_layer + ", not InfiniBand";
          return plan;
        }
        plan.skipped.push_back(p.name() + ": link layer " + p.link_layer + ", not served (no SA on it)");
        continue;
      }
      const bool listed = std::any_of(plan.serve.begin(), plan.serve.end(),
                                      [&](const HcaPort& s) { return s.name() == p.name(); });
      if (!listed) plan.serve.push_back(p);
    }
  }
  if (plan.serve.empty()) plan.error = "[fabric] ports: none of the listed ports is InfiniBand";
  return plan;
}

std::vector<HcaPort> present_ports(const std::vector<HcaPort>& found, const std::vector<std::string>& wanted) {
  std::vector<HcaPort> out;
  for (const HcaPort& p : found) {
    const bool named = wanted.empty() || std::any_of(wanted.begin(), wanted.end(), [&](const std::string& name) {
                         return name == p.name() || name == p.ca;
                       });
    if (named && p.infiniband()) out.push_back(p);
  }
  return out;
}

}  // namespace ibat::fabric
