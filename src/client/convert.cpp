// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Conversions between libibat's C structs and core types (see convert.h).
#include "client/convert.h"

#include <algorithm>
#include <cstring>

#include "wire/byte_order.h"

namespace ibat::client {

// Part of libibat1's ABI: new fields come out of `reserved`, the size stays.
static_assert(sizeof(ibat_resolve_opts) == 52 && alignof(ibat_resolve_opts) == 4);

std::optional<core::Target> to_core_target(const ibat_target& t) {
  switch (t.type) {
    case IBAT_TARGET_GID: return core::Gid{std::to_array(t.u.gid.raw)};
    case IBAT_TARGET_LID: return core::Lid{t.u.lid};
    case IBAT_TARGET_IPV4:
    case IBAT_TARGET_IPV6: return to_ip(t);
    case IBAT_TARGET_HW: return core::HwAddr{std::to_array(t.u.hw)};
    default: return std::nullopt;
  }
}

std::optional<core::IpAddr> to_ip(const ibat_target& t) {
  if (t.type == IBAT_TARGET_IPV4)
    return core::IpAddr::from_v4(wire::get32(t.u.ipv4, 0));
  if (t.type == IBAT_TARGET_IPV6) {
    core::IpAddr ip;
    ip.raw = std::to_array(t.u.ipv6);
    return ip;
  }
  return std::nullopt;
}

std::optional<core::ResolveRequest> to_request(const ibat_target& target, const ibat_resolve_opts* opts) {
  auto core_target = to_core_target(target);
  if (!core_target) return std::nullopt;
  core::ResolveRequest req;
  req.target = *core_target;
  if (!opts) return req;
  constexpr std::uint32_t known = IBAT_RESOLVE_CACHE_ONLY | IBAT_RESOLVE_FORCE_SA | IBAT_RESOLVE_SGID | IBAT_RESOLVE_PKEY |
                                   IBAT_RESOLVE_SERVICE_ID | IBAT_RESOLVE_QOS_CLASS | IBAT_RESOLVE_TCLASS;
  if (opts->flags & ~known) return std::nullopt;
  if ((opts->flags & IBAT_RESOLVE_QOS_CLASS) && opts->qos_class > core::kMaxQosClass) return std::nullopt;
  if (opts->flags & IBAT_RESOLVE_SERVICE_ID)
    req.service_id = std::uint64_t{opts->service_id_hi} << 32 | opts->service_id_lo;
  if (opts->flags & IBAT_RESOLVE_QOS_CLASS) req.qos_class = opts->qos_class;
  if (opts->flags & IBAT_RESOLVE_TCLASS) req.tclass = opts->tclass;
  req.cache_only = opts->flags & IBAT_RESOLVE_CACHE_ONLY;
  req.force_sa = opts->flags & IBAT_RESOLVE_FORCE_SA;
  if (opts->flags & IBAT_RESOLVE_SGID) req.sgid = core::Gid{std::to_array(opts->sgid.raw)};
  if (opts->flags & IBAT_RESOLVE_PKEY) req.pkey = core::Pkey{opts->pkey};
  if (opts->timeout_ms) req.timeout = std::chrono::milliseconds(opts->timeout_ms);
  return req;
}

ibat_path to_c_path(const core::ResolveResult& result) {
  const core::PathRecord& p = result.path;
  ibat_path out{};
  std::copy(p.dgid.raw.begin(), p.dgid.raw.end(), out.dgid.raw);
  std::copy(p.sgid.raw.begin(), p.sgid.raw.end(), out.sgid.raw);
  out.dlid = p.dlid.value;
  out.slid = p.slid.value;
  out.pkey = p.pkey.value;
  out.sl = p.sl;
  out.mtu = p.mtu;
  out.rate = p.rate;
  out.pkt_life = p.pkt_life;
  out.hop_limit = p.hop_limit;
  out.tclass = p.tclass;
  out.flow_label = p.flow_label;
  switch (result.state) {
    case core::EntryState::stale: out.state = IBAT_STATE_STALE; break;
    case core::EntryState::provisional: out.state = IBAT_STATE_PROVISIONAL; break;
    default: out.state = IBAT_STATE_VALID; break;
  }
  out.age_ms = static_cast<std::uint32_t>(
      std::min<std::int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(result.age).count(), UINT32_MAX));
  return out;
}

ibat_target to_c_target(const core::Target& target) {
  ibat_target out{};
  std::visit(
      [&](const auto& t) {
        using T = std::decay_t<decltype(t)>;
        if constexpr (std::is_same_v<T, core::Gid>) {
          out.type = IBAT_TARGET_GID;
          std::copy(t.raw.begin(), t.raw.end(), out.u.gid.raw);
        } else if constexpr (std::is_same_v<T, core::Lid>) {
          out.type = IBAT_TARGET_LID;
          out.u.lid = t.value;
        } else if constexpr (std::is_same_v<T, core::IpAddr>) {
          out.type = t.v4 ? IBAT_TARGET_IPV4 : IBAT_TARGET_IPV6;
          if (t.v4) std::copy(t.raw.begin() + 12, t.raw.end(), out.u.ipv4);
          else std::copy(t.raw.begin(), t.raw.end(), out.u.ipv6);
        } else {
          out.type = IBAT_TARGET_HW;
          std::copy(t.raw.begin(), t.raw.end(), out.u.hw);
        }
      },
      target);
  return out;
}

}  // namespace ibat::client
