// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Which ServiceID and QoS class a resolve is cached and asked by (docs/design.md, "QoS").
// An SM's QoS policy may give a path its SL, MTU, rate and packet lifetime by the query's
// ServiceID or QoS class. ibat cannot read that policy, so Policy names the ServiceIDs and QoS
// classes a policy may single out (by default the standard ULPs' ServiceIDs and every QoS class
// but 0): a resolve that carries one of them is cached apart and asked with it (a class alone by
// a GetTable of its own: core::SaScheduler); any other shares the destination's default path,
// which is what the prefetched table holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibat::core {

// The largest QoS class: the PathRecord's field is 12 bits.
inline constexpr std::uint16_t kMaxQosClass = 0xFFF;

// rdma_cm's ServiceID of a listener on a TCP-space port (rdma_get_service_id: port space << 16 +
// port, the TCP port space being 0x0106).
constexpr std::uint64_t rdma_cm_tcp_service_id(std::uint16_t port) { return 0x0106'0000ULL + port; }

// An inclusive range of ServiceIDs or QoS classes.
struct IdRange {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  bool contains(std::uint64_t v) const { return lo <= v && v <= hi; }
  bool operator==(const IdRange&) const = default;
};

// "0x1060cbc", "0x10000-0x1ffff" (decimal too), or a ULP's name: "sdp", "rds", "iser",
// "nfs-rdma" (OpenSM's qos-ulps ServiceIDs; NFS/RDMA's port 20049). nullopt: not one of those.
std::optional<IdRange> parse_service_ids(std::string_view text);
// "4" or "8-15", each a 12-bit QoS class. nullopt: not one of those.
std::optional<IdRange> parse_qos_classes(std::string_view text);
// "0x1060cbc", "0x10000-0x1ffff" (hex) or "4", "8-15" (decimal): what the parsers read back.
std::string to_string(const IdRange& range, bool hex);
// A ULP's name when the range is exactly its ServiceIDs, else to_string(range, true).
std::string service_ids_name(const IdRange& range);

// The standard ULPs' ServiceIDs, the default of Policy::qos_service_ids.
const std::vector<IdRange>& standard_ulp_service_ids();
// Every QoS class but 0 (1-4095), the default of Policy::qos_classes ("auto" in ibatd.toml): class
// 0 is what a connect that set no ToS carries, and the default path serves it.
const std::vector<IdRange>& every_qos_class();

// The query fields of a cache key beyond (SGID, DGID, P_Key); all absent: the default path.
// The ServiceID is held in halves: 4-byte alignment keeps a cache entry at 104 bytes.
struct QosKey {
  static constexpr std::uint8_t kServiceId = 1;
  static constexpr std::uint8_t kQosClass = 2;
  std::uint32_t service_id_hi = 0;  // 0 unless kServiceId
  std::uint32_t service_id_lo = 0;
  std::uint16_t qos_class = 0;      // 0 unless kQosClass
  std::uint8_t fields = 0;

  bool is_default() const { return fields == 0; }
  std::uint64_t service_id() const { return std::uint64_t{service_id_hi} << 32 | service_id_lo; }
  std::optional<std::uint64_t> sent_service_id() const {
    return fields & kServiceId ? std::optional{service_id()} : std::nullopt;
  }
  std::optional<std::uint16_t> sent_qos_class() const {
    return fields & kQosClass ? std::optional{qos_class} : std::nullopt;
  }
  bool operator==(const QosKey&) const = default;

  // The key of a resolve naming these fields: each kept when one of the ranges holds it.
  static QosKey of(std::optional<std::uint64_t> service_id, std::optional<std::uint16_t> qos_class,
                   const std::vector<IdRange>& service_ids, const std::vector<IdRange>& qos_classes);
};

}  // namespace ibat::core
