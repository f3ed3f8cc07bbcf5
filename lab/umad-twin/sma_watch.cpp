// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SmaWatch: the SMA's client-reregistration behaviour the twin adds to ibsim (sma_watch.h).
#include "sma_watch.h"

#include "big_endian.h"

namespace ibat::umad_twin {
namespace {

constexpr std::uint8_t kClassSmpLid = 0x01;
constexpr std::uint8_t kClassSmpDirected = 0x81;
constexpr std::uint8_t kMethodGetResp = 0x81;
constexpr std::uint8_t kMethodSet = 0x02;
constexpr std::uint16_t kAttrNodeInfo = 0x0011;
constexpr std::uint16_t kAttrPortInfo = 0x0015;
constexpr std::size_t kSmpData = 64;           // SMP data, LID-routed and directed alike
constexpr std::size_t kInitialPath = 128;      // directed route: the initial path (64 bytes)
constexpr std::size_t kNodeInfoPortGuid = 20;  // NodeInfo:PortGUID
constexpr std::size_t kCapMaskByte = 20;       // PortInfo:CapabilityMask, its bits 31..24
constexpr std::uint8_t kClientReregSupported = 0x02;  // bit 25: IsClientReregistrationSupported
constexpr std::size_t kClientRereg = 51;       // PortInfo: ClientReregister is the top bit
// Sets whose answer never came (a lost SMP) are forgotten past this many: a sweep's worth.
constexpr std::size_t kMaxPendingSets = 65536;

bool is_smp(const std::uint8_t* mad) { return mad[1] == kClassSmpLid || mad[1] == kClassSmpDirected; }

// A directed route's identity: its hop count and the initial path's hops (entry 0 is unused).
std::string route_of(const std::uint8_t* mad) {
  const std::uint8_t hops = mad[7] & 0x3F;
  std::string key(1, static_cast<char>(hops));
  key.append(reinterpret_cast<const char*>(mad + kInitialPath + 1), hops);
  return key;
}

}  // namespace

void SmaWatch::on_send(const std::uint8_t* mad) {
  if (mad[1] != kClassSmpDirected || mad[3] != kMethodSet || get16(mad + 16) != kAttrPortInfo) return;
  if (!(mad[kSmpData + kClientRereg] & 0x80)) return;
  std::lock_guard lock(mutex_);
  if (reregisters_.size() >= kMaxPendingSets) reregisters_.clear();
  reregisters_[get64(mad + 8)] = route_of(mad);
}

std::optional<std::uint64_t> SmaWatch::on_receive(std::uint8_t* mad) {
  if (!is_smp(mad) || mad[3] != kMethodGetResp) return std::nullopt;
  const std::uint16_t attr = get16(mad + 16);
  if (attr == kAttrPortInfo) mad[kSmpData + kCapMaskByte] |= kClientReregSupported;
  if (mad[1] != kClassSmpDirected) return std::nullopt;
  std::lock_guard lock(mutex_);
  if (attr == kAttrNodeInfo) {
    guid_of_route_[route_of(mad)] = get64(mad + kSmpData + kNodeInfoPortGuid);
    return std::nullopt;
  }
  if (attr != kAttrPortInfo) return std::nullopt;
  const auto set = reregisters_.find(get64(mad + 8));
  if (set == reregisters_.end()) return std::nullopt;
  const std::string route = set->second;
  reregisters_.erase(set);
  if (get16(mad + 4) & 0x7FFF) return std::nullopt;  // the SMA refused the Set
  const auto guid = guid_of_route_.find(route);
  if (guid == guid_of_route_.end()) return std::nullopt;
  return guid->second;
}

}  // namespace ibat::umad_twin
