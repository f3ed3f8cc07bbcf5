// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// QosKey and the ServiceID / QoS class ranges (see qos_key.h).
#include "core/qos_key.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace ibat::core {
namespace {

struct NamedRange {
  std::string_view name;
  IdRange range;
};
// OpenSM 3.3's qos-ulps keywords (osm_qos_parser.y) and NFS/RDMA, which has none.
constexpr NamedRange kUlps[] = {
    {"sdp", {0x10000, 0x1FFFF}},
    {"rds", {rdma_cm_tcp_service_id(18634), rdma_cm_tcp_service_id(18634)}},
    {"iser", {rdma_cm_tcp_service_id(3260), rdma_cm_tcp_service_id(3260)}},
    {"nfs-rdma", {rdma_cm_tcp_service_id(20049), rdma_cm_tcp_service_id(20049)}},
};

std::optional<std::uint64_t> parse_number(std::string_view text) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::optional<IdRange> parse_range(std::string_view text, std::uint64_t max) {
  const std::size_t dash = text.find('-');
  const auto lo = parse_number(text.substr(0, dash));
  const auto hi = dash == std::string_view::npos ? lo : parse_number(text.substr(dash + 1));
  if (!lo || !hi || *lo > *hi || *hi > max) return std::nullopt;
  return IdRange{*lo, *hi};
}

bool any_holds(const std::vector<IdRange>& ranges, std::uint64_t v) {
  return std::any_of(ranges.begin(), ranges.end(), [v](const IdRange& r) { return r.contains(v); });
}

}  // namespace

std::optional<IdRange> parse_service_ids(std::string_view text) {
  for (const NamedRange& ulp : kUlps) {
    if (text == ulp.name) return ulp.range;
  }
  return parse_range(text, UINT64_MAX);
}

std::optional<IdRange> parse_qos_classes(std::string_view text) { return parse_range(text, kMaxQosClass); }

std::string to_string(const IdRange& range, bool hex) {
  char buf[48];
  const char* format = hex ? "0x%llx" : "%llu";
  const char* format_range = hex ? "0x%llx-0x%llx" : "%llu-%llu";
  const auto lo = static_cast<unsigned long long>(range.lo);
  const auto hi = static_cast<unsigned long long>(range.hi);
  if (range.lo == range.hi) std::snprintf(buf, sizeof buf, format, lo);
  else std::snprintf(buf, sizeof buf, format_range, lo, hi);
  return buf;
}

std::string service_ids_name(const IdRange& range) {
  for (const NamedRange& ulp : kUlps) {
    if (ulp.range == range) return std::string(ulp.name);
  }
  return to_string(range, true);
}

const std::vector<IdRange>& standard_ulp_service_ids() {
  static const std::vector<IdRange> ranges = [] {
    std::vector<IdRange> out;
    for (const NamedRange& ulp : kUlps) out.push_back(ulp.range);
    return out;
  }();
  return ranges;
}

const std::vector<IdRange>& every_qos_class() {
  static const std::vector<IdRange> ranges{IdRange{1, kMaxQosClass}};
  return ranges;
}

QosKey QosKey::of(std::optional<std::uint64_t> service_id, std::optional<std::uint16_t> qos_class,
                  const std::vector<IdRange>& service_ids, const std::vector<IdRange>& qos_classes) {
  QosKey key;
  if (service_id && any_holds(service_ids, *service_id)) {
    key.service_id_hi = static_cast<std::uint32_t>(*service_id >> 32);
    key.service_id_lo = static_cast<std::uint32_t>(*service_id);
    key.fields |= kServiceId;
  }
  if (qos_class && any_holds(qos_classes, *qos_class)) {
    key.qos_class = *qos_class;
    key.fields |= kQosClass;
  }
  return key;
}

}  // namespace ibat::core
