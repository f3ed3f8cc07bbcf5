// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Writes the twin's fake sysfs (see fake_sysfs.h). Formats follow the kernel's attribute files.
#include "fake_sysfs.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "big_endian.h"

namespace ibat::umad_twin {
namespace {

namespace fs = std::filesystem;
constexpr const char* kClassDir = "/sys/class/infiniband";  // also the prefix of .../infiniband_mad


std::string hex4(std::uint64_t v, int groups) {
  std::string out;
  char part[8];
  for (int g = groups - 1; g >= 0; --g) {
    std::snprintf(part, sizeof part, "%04x", static_cast<unsigned>((v >> (16 * g)) & 0xffff));
    out += part;
    if (g) out += ':';
  }
  return out;
}

void put(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::trunc) << text;
}

const char* state_name(unsigned s) {
  static const char* names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  return s < 6 ? names[s] : "<unknown>";
}
const char* phys_name(unsigned s) {
  static const char* names[] = {"<unknown>", "Sleep", "Polling", "Disabled", "PortConfigurationTraining",
                                "LinkUp", "LinkErrorRecovery", "Phy Test"};
  return s < 8 ? names[s] : "<unknown>";
}

// The kernel's "rate" attribute: "<Gb/s> Gb/sec (<width>X <speed name>)".
std::string rate_text(const std::array<std::uint8_t, 64>& pi) {
  const unsigned width_code = pi[31];
  const unsigned width = width_code == 1 ? 1 : width_code == 2 ? 4 : width_code == 4 ? 8 : width_code == 8 ? 12 : 0;
  const bool has_ext = get32(pi, 20) & (1u << 14);
  const unsigned ext = has_ext ? pi[62] >> 4 : 0;
  char text[64];
  if (ext) {
    const unsigned per_lane = ext == 1 ? 14 : ext == 2 ? 25 : ext == 4 ? 50 : 100;
    const char* name = ext == 1 ? " FDR" : ext == 2 ? " EDR" : ext == 4 ? " HDR" : " NDR";
    std::snprintf(text, sizeof text, "%u Gb/sec (%uX%s)\n", per_lane * width, width, name);
  } else {
    const unsigned speed = pi[35] >> 4;  // 1 SDR 2.5, 2 DDR 5, 4 QDR 10 Gb/s per lane
    const unsigned tenths = width * speed * 25;
    const char* name = speed == 2 ? " DDR" : speed == 4 ? " QDR" : "";
    std::snprintf(text, sizeof text, "%u%s Gb/sec (%uX%s)\n", tenths / 10, tenths % 10 ? ".5" : "", width, name);
  }
  return text;
}

}  // namespace

std::uint64_t port_guid(const CaRecords& ca) { return get64(ca.node_info, 12) + port_number(ca); }
std::uint16_t lid(const CaRecords& ca) { return static_cast<std::uint16_t>(get16(ca.port_info, 16)); }
unsigned port_number(const CaRecords& ca) {
  if (ca.node_info[2] == 2) return 0;  // a switch is managed through its port 0, as in its sysfs
  return ca.port_info[28] ? ca.port_info[28] : 1;
}

void FakeSysfs::write_abi() { put(fs::path(root_) / "sys/class/infiniband_mad/abi_version", "5\n"); }

void FakeSysfs::write_ca(const CaRecords& ca) {
  const fs::path dir = fs::path(root_) / "sys/class/infiniband" / ca.name;
  const unsigned type = ca.node_info[2];
  put(dir / "node_type", std::to_string(type) + (type == 1 ? ": CA\n" : type == 2 ? ": SWITCH\n" : ": ROUTER\n"));
  put(dir / "fw_ver", "1.0.0\n");
  put(dir / "hw_rev", std::to_string(get32(ca.node_info, 32)) + "\n");
  put(dir / "hca_type", "ibsim\n");
  put(dir / "node_guid", hex4(get64(ca.node_info, 12), 4) + "\n");
  put(dir / "sys_image_guid", hex4(get64(ca.node_info, 4), 4) + "\n");
  write_port(ca);
  for (const char* kind : {"umad", "issm"}) {
    const fs::path mad = fs::path(root_) / "sys/class/infiniband_mad" / (kind + std::to_string(ca.umad));
    put(mad / "ibdev", ca.name + "\n");
    put(mad / "port", std::to_string(port_number(ca)) + "\n");
  }
}

void FakeSysfs::write_port(const CaRecords& ca) {
  const auto& pi = ca.port_info;
  const fs::path dir = fs::path(root_) / "sys/class/infiniband" / ca.name / "ports" / std::to_string(port_number(ca));
  char text[32];
  put(dir / "lid_mask_count", std::to_string(pi[34] & 0x7) + "\n");
  std::snprintf(text, sizeof text, "0x%x\n", get16(pi, 18));
  put(dir / "sm_lid", text);
  put(dir / "sm_sl", std::to_string(pi[36] & 0xf) + "\n");
  std::snprintf(text, sizeof text, "0x%x\n", get16(pi, 16));
  put(dir / "lid", text);
  put(dir / "state", std::to_string(pi[32] & 0xf) + ": " + state_name(pi[32] & 0xf) + "\n");
  put(dir / "phys_state", std::to_string(pi[33] >> 4) + ": " + phys_name(pi[33] >> 4) + "\n");
  put(dir / "rate", rate_text(pi));
  std::snprintf(text, sizeof text, "0x%08x\n", get32(pi, 20));
  put(dir / "cap_mask", text);
  put(dir / "link_layer", "InfiniBand\n");
  put(dir / "gids" / "0", hex4(get64(pi, 8), 4) + ":" + hex4(port_guid(ca), 4) + "\n");
  for (unsigned i = 0; i < ca.pkeys.size() / 2; ++i) {
    std::snprintf(text, sizeof text, "0x%04x\n", (unsigned{ca.pkeys[2 * i]} << 8) | ca.pkeys[2 * i + 1]);
    put(dir / "pkeys" / std::to_string(i), text);
  }
}

void FakeSysfs::remove_ca(const CaRecords& ca) {
  std::error_code ignored;
  for (const char* kind : {"umad", "issm"}) {
    fs::remove_all(fs::path(root_) / "sys/class/infiniband_mad" / (kind + std::to_string(ca.umad)), ignored);
  }
  fs::remove_all(fs::path(root_) / "sys/class/infiniband" / ca.name, ignored);
}

void FakeSysfs::remove() {
  std::error_code ignored;
  fs::remove_all(root_, ignored);
}

std::string FakeSysfs::redirect(const char* path) const {
  if (path == nullptr || std::strncmp(path, kClassDir, std::strlen(kClassDir)) != 0) return {};
  const char rest = path[std::strlen(kClassDir)];
  if (rest != '\0' && rest != '/' && std::strncmp(path + std::strlen(kClassDir), "_mad", 4) != 0) return {};
  return root_ + path;
}

}  // namespace ibat::umad_twin
