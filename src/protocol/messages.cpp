// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Payload codecs of the native protocol operations (see messages.h and docs/protocol.md).
#include "protocol/messages.h"

#include <algorithm>
#include <limits>

#include "mad/path_record.h"
#include "protocol/wire.h"

namespace ibat::protocol {
namespace {

using Bytes = std::span<const std::uint8_t>;

std::string size_error(std::string_view what, std::size_t got, std::string_view expected) {
  return std::string(what) + " payload is " + std::to_string(got) + " bytes, expected " +
         std::string(expected);
}

std::size_t target_size(TargetType type) {
  switch (type) {
    case TargetType::gid: return 16;
    case TargetType::lid: return 2;
    case TargetType::ipv4: return 4;
    case TargetType::ipv6: return 16;
    case TargetType::hw: return 20;
  }
  return 0;
}

std::uint32_t timeout_ms(const std::optional<core::Duration>& timeout) {
  if (!timeout) return 0;
  // Round up so a sub-millisecond deadline does not turn into 0 ("daemon default").
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(*timeout).count();
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(ms, 1, std::numeric_limits<std::uint32_t>::max()));
}

void write_ip(WireWriter& w, const core::IpAddr& ip) {
  w.u8(ip.v4 ? 4 : 6);
  w.bytes(ip.raw);
}

std::optional<core::IpAddr> read_ip(WireReader& r, std::string& error) {
  std::uint8_t family = r.u8();
  auto raw = r.array<16>();
  if (family == 4) {
    return core::IpAddr::from_v4(wire::get32(raw, 12));
  }
  if (family == 6) {
    core::IpAddr ip;
    ip.raw = raw;
    return ip;
  }
  error = "address family " + std::to_string(family) + " is neither 4 nor 6";
  return std::nullopt;
}

std::uint8_t state_code(core::EntryState s) {
  switch (s) {
    case core::EntryState::valid: return 1;
    case core::EntryState::stale: return 2;
    case core::EntryState::provisional: return 3;
    default: return 0;
  }
}

}  // namespace

void append_resolve_request(std::vector<std::uint8_t>& out, std::uint32_t id,
                            const core::ResolveRequest& req) {
  std::size_t start = begin_frame(out, static_cast<std::uint8_t>(Op::resolve), Status::ok, 0, id);
  WireWriter w{out};
  TargetType type = std::visit(
      [](const auto& t) -> TargetType {
        using T = std::decay_t<decltype(t)>;
        if constexpr (std::is_same_v<T, core::Gid>) return TargetType::gid;
        else if constexpr (std::is_same_v<T, core::Lid>) return TargetType::lid;
        else if constexpr (std::is_same_v<T, core::IpAddr>) return t.v4 ? TargetType::ipv4 : TargetType::ipv6;
        else return TargetType::hw;
      },
      req.target);
  std::uint8_t flags = static_cast<std::uint8_t>((req.cache_only ? kResolveCacheOnly : 0) |
                                                 (req.force_sa ? kResolveForceSa : 0) |
                                                 (req.sgid ? kResolveSgid : 0) | (req.pkey ? kResolvePkey : 0) |
                                                 (req.service_id ? kResolveServiceId : 0) |
                                                 (req.qos_class ? kResolveQosClass : 0) | (req.tclass ? kResolveTclass : 0));
  w.u8(static_cast<std::uint8_t>(type));
  w.u8(flags);
  w.u16(req.pkey ? req.pkey->value : 0);
  w.u32(timeout_ms(req.timeout));
  w.bytes(req.sgid ? req.sgid->raw : core::Gid{}.raw);
  std::visit(
      [&](const auto& t) {
        using T = std::decay_t<decltype(t)>;
        if constexpr (std::is_same_v<T, core::Lid>) w.u16(t.value);
        else if constexpr (std::is_same_v<T, core::IpAddr>) {
          if (t.v4) w.bytes(std::span(t.raw).subspan(12));
          else w.bytes(t.raw);
        } else w.bytes(t.raw);
      },
      req.target);
  if (flags & kResolveQosFields) {
    w.u64(req.service_id.value_or(0));
    w.u16(req.qos_class.value_or(0));
    w.u8(req.tclass.value_or(0));
    w.u8(0);
  }
  finish_frame(out, start);
}

constexpr char kHexDigits[] = "0123456789abcdef";

Decoded<core::ResolveRequest> decode_resolve_request(Bytes payload) {
  if (payload.size() < kResolveFixedSize)
    return Decoded<core::ResolveRequest>::failure(size_error("RESOLVE", payload.size(), "at least 24"));
  WireReader r{payload};
  std::uint8_t type_raw = r.u8();
  if (type_raw < 1 || type_raw > 5)
    return Decoded<core::ResolveRequest>::failure("RESOLVE target type " + std::to_string(type_raw) +
                                                  " unknown (1 GID, 2 LID, 3 IPv4, 4 IPv6, 5 hw)");
  auto type = static_cast<TargetType>(type_raw);
  std::uint8_t flags = r.u8();
  constexpr std::uint8_t known = kResolveCacheOnly | kResolveForceSa | kResolveSgid | kResolvePkey | kResolveQosFields;
  if (flags & ~known)
    return Decoded<core::ResolveRequest>::failure(
        "RESOLVE flags 0x" + std::string{kHexDigits[flags >> 4], kHexDigits[flags & 0xF]} +
        " has reserved bits set (only 0x7f are defined)");
  std::size_t expected = kResolveFixedSize + target_size(type) + (flags & kResolveQosFields ? kResolveQosTrailerSize : 0);
  if (payload.size() != expected)
    return Decoded<core::ResolveRequest>::failure(
        size_error("RESOLVE", payload.size(), std::to_string(expected) + " for this target type"));
  core::ResolveRequest req;
  req.cache_only = flags & kResolveCacheOnly;
  req.force_sa = flags & kResolveForceSa;
  std::uint16_t pkey = r.u16();
  if (flags & kResolvePkey) req.pkey = core::Pkey{pkey};
  if (std::uint32_t ms = r.u32()) req.timeout = std::chrono::milliseconds(ms);
  core::Gid sgid{r.array<16>()};
  if (flags & kResolveSgid) req.sgid = sgid;
  switch (type) {
    case TargetType::gid: req.target = core::Gid{r.array<16>()}; break;
    case TargetType::lid: req.target = core::Lid{r.u16()}; break;
    case TargetType::ipv4: req.target = core::IpAddr::from_v4(r.u32()); break;
    case TargetType::ipv6: {
      core::IpAddr ip;
      ip.raw = r.array<16>();
      req.target = ip;
      break;
    }
    case TargetType::hw: req.target = core::HwAddr{r.array<20>()}; break;
  }
  if (flags & kResolveQosFields) {
    const std::uint64_t service_id = r.u64();
    const std::uint16_t qos_class = r.u16();
    const std::uint8_t tclass = r.u8();
    const std::uint8_t reserved = r.u8();
    if (qos_class > core::kMaxQosClass || reserved != 0)
      return Decoded<core::ResolveRequest>::failure(
          qos_class > core::kMaxQosClass ? "RESOLVE qos_class " + std::to_string(qos_class) + " is not 12 bits (0-4095)"
                            : "RESOLVE QoS trailer byte 11 is reserved and must be zero");
    if (flags & kResolveServiceId) req.service_id = service_id;
    if (flags & kResolveQosClass) req.qos_class = qos_class;
    if (flags & kResolveTclass) req.tclass = tclass;
  }
  return req;
}

void append_resolve_reply(std::vector<std::uint8_t>& out, std::uint32_t id, const core::ResolveResult& result) {
  Status status = status_from_error(result.error);
  std::size_t start = begin_frame(out, reply_op(Op::resolve), status, 0, id);
  if (status == Status::ok) {
    WireWriter w{out};
    w.bytes(mad::encode_path_record(result.path));
    w.u8(state_code(result.state));
    w.u8(static_cast<std::uint8_t>(result.origin));  // bytes 65, 66: zero in older daemons
    w.u8(static_cast<std::uint8_t>(result.key_qos_fields & (core::QosKey::kServiceId | core::QosKey::kQosClass)));
    w.zeros(1);
    auto age = std::chrono::duration_cast<std::chrono::milliseconds>(result.age).count();
    w.u32(static_cast<std::uint32_t>(std::clamp<std::int64_t>(age, 0, std::numeric_limits<std::uint32_t>::max())));
  }
  finish_frame(out, start);
}

Decoded<core::ResolveResult> decode_resolve_reply(Status status, Bytes payload) {
  using D = Decoded<core::ResolveResult>;
  auto error = error_from_status(status);
  if (!error) return D::failure("RESOLVE reply status " + std::string(to_string(status)) + " is not a resolve outcome");
  core::ResolveResult result;
  result.error = *error;
  if (*error != core::Error::ok) {
    if (!payload.empty()) return D::failure(size_error("RESOLVE error reply", payload.size(), "0"));
    return result;
  }
  if (payload.size() != kPathReplySize) return D::failure(size_error("RESOLVE reply", payload.size(), "72"));
  auto path = mad::decode_path_record(payload.first(mad::kPathRecordSize));
  if (!path) return D::failure("RESOLVE reply " + path.error().message);
  result.path = path.value();
  WireReader r{payload.subspan(mad::kPathRecordSize)};
  std::uint8_t state = r.u8();
  const std::uint8_t origin = r.u8();
  const std::uint8_t key_fields = r.u8();
  r.u8();
  std::uint32_t age_ms = r.u32();
  // An origin this client does not know (a newer daemon's) reads as unknown, not as malformed.
  result.origin = origin <= static_cast<std::uint8_t>(core::PathOrigin::neighbour) ? static_cast<core::PathOrigin>(origin)
                                                                                   : core::PathOrigin::unknown;
  result.key_qos_fields = static_cast<std::uint8_t>(key_fields & (core::QosKey::kServiceId | core::QosKey::kQosClass));
  switch (state) {
    case 1: result.state = core::EntryState::valid; break;
    case 2: result.state = core::EntryState::stale; break;
    case 3: result.state = core::EntryState::provisional; break;
    default: return D::failure("RESOLVE reply path state " + std::to_string(state) + " unknown (1..3)");
  }
  if (!result.path.is_servable())
    return D::failure("RESOLVE reply carries a path that must not be used (DLID " +
                      result.path.dlid.to_string() + ", SLID " + result.path.slid.to_string() + ")");
  result.age = std::chrono::milliseconds(age_ms);
  return result;
}

void append_neigh_add(std::vector<std::uint8_t>& out, std::uint32_t id, const NeighAdd& req) {
  std::size_t start = begin_frame(out, static_cast<std::uint8_t>(Op::neigh_add), Status::ok, 0, id);
  WireWriter w{out};
  write_ip(w, req.ip);
  w.bytes(req.hw.raw);
  w.u16(req.slid ? req.slid->value : 0);
  finish_frame(out, start);
}

Decoded<NeighAdd> decode_neigh_add(Bytes payload) {
  if (payload.size() != 39) return Decoded<NeighAdd>::failure(size_error("NEIGH_ADD", payload.size(), "39"));
  WireReader r{payload};
  std::string error;
  auto ip = read_ip(r, error);
  if (!ip) return Decoded<NeighAdd>::failure("NEIGH_ADD " + error);
  NeighAdd req{*ip, core::HwAddr{r.array<20>()}, std::nullopt};
  if (std::uint16_t slid = r.u16()) req.slid = core::Lid{slid};
  return req;
}

void append_neigh_del(std::vector<std::uint8_t>& out, std::uint32_t id, const NeighDel& req) {
  std::size_t start = begin_frame(out, static_cast<std::uint8_t>(Op::neigh_del), Status::ok, 0, id);
  WireWriter w{out};
  write_ip(w, req.ip);
  finish_frame(out, start);
}

Decoded<NeighDel> decode_neigh_del(Bytes payload) {
  if (payload.size() != 17) return Decoded<NeighDel>::failure(size_error("NEIGH_DEL", payload.size(), "17"));
  WireReader r{payload};
  std::string error;
  auto ip = read_ip(r, error);
  if (!ip) return Decoded<NeighDel>::failure("NEIGH_DEL " + error);
  return NeighDel{*ip};
}

void append_flush(std::vector<std::uint8_t>& out, std::uint32_t id, const FlushRequest& req) {
  std::size_t start = begin_frame(out, static_cast<std::uint8_t>(Op::flush), Status::ok, 0, id);
  if (req.dgid || req.sgid) {
    WireWriter w{out};
    w.bytes(req.dgid ? req.dgid->raw : core::Gid{}.raw);
    w.u16(req.dgid && req.pkey ? req.pkey->value : 0);
    if (req.sgid) w.bytes(req.sgid->raw);
  }
  finish_frame(out, start);
}

Decoded<FlushRequest> decode_flush(Bytes payload) {
  if (payload.empty()) return FlushRequest{};
  if (payload.size() != 18 && payload.size() != 34)
    return Decoded<FlushRequest>::failure(size_error("FLUSH", payload.size(), "0, 18 or 34"));
  WireReader r{payload};
  FlushRequest req;
  const core::Gid dgid{r.array<16>()};
  const std::uint16_t pkey = r.u16();
  if (payload.size() == 34) {
    req.sgid = core::Gid{r.array<16>()};
    if (req.sgid->is_zero()) return Decoded<FlushRequest>::failure("FLUSH: a source GID of zero");
    if (dgid.is_zero()) {
      if (pkey != 0) return Decoded<FlushRequest>::failure("FLUSH: a P_Key without a destination GID");
      return req;
    }
  }
  req.dgid = dgid;
  if (pkey) req.pkey = core::Pkey{pkey};
  return req;
}

void append_paths_request(std::vector<std::uint8_t>& out, std::uint32_t id, const PathsRequest& req) {
  std::size_t start = begin_frame(out, static_cast<std::uint8_t>(Op::paths), Status::ok, 0, id);
  WireWriter w{out};
  w.u32(req.cursor);
  w.u32(req.limit);
  finish_frame(out, start);
}

Decoded<PathsRequest> decode_paths_request(Bytes payload) {
  if (payload.empty()) return PathsRequest{};
  if (payload.size() != 8) return Decoded<PathsRequest>::failure(size_error("PATHS", payload.size(), "0 or 8"));
  WireReader r{payload};
  PathsRequest req;
  req.cursor = r.u32();
  req.limit = r.u32();
  return req;
}

void append_paths_reply(std::vector<std::uint8_t>& out, std::uint32_t id, const PathsPage& page) {
  std::vector<std::uint8_t> body;
  WireWriter{body}.u32(page.next);
  std::string text(body.begin(), body.end());
  append_chunked_reply(out, Op::paths, id, text + page.json);
}

Decoded<PathsPage> decode_paths_reply(Bytes body) {
  if (body.size() < 4) return Decoded<PathsPage>::failure(size_error("PATHS reply", body.size(), "at least 4"));
  WireReader r{body};
  PathsPage page;
  page.next = r.u32();
  page.json.assign(body.begin() + 4, body.end());
  return page;
}

void append_flush_reply(std::vector<std::uint8_t>& out, std::uint32_t id, std::uint32_t dropped) {
  std::size_t start = begin_frame(out, reply_op(Op::flush), Status::ok, 0, id);
  WireWriter{out}.u32(dropped);
  finish_frame(out, start);
}

Decoded<std::optional<std::uint32_t>> decode_flush_reply(Bytes payload) {
  if (payload.empty()) return std::optional<std::uint32_t>{};
  if (payload.size() != 4)
    return Decoded<std::optional<std::uint32_t>>::failure(size_error("FLUSH reply", payload.size(), "0 or 4"));
  WireReader r{payload};
  return std::optional<std::uint32_t>{r.u32()};
}

void append_cancel(std::vector<std::uint8_t>& out, std::uint32_t id, const CancelRequest& req) {
  std::size_t start = begin_frame(out, static_cast<std::uint8_t>(Op::cancel), Status::ok, 0, id);
  WireWriter{out}.u32(req.target_id);
  finish_frame(out, start);
}

Decoded<CancelRequest> decode_cancel(Bytes payload) {
  if (payload.size() != 4) return Decoded<CancelRequest>::failure(size_error("CANCEL", payload.size(), "4"));
  WireReader r{payload};
  return CancelRequest{r.u32()};
}

void append_table_hits(std::vector<std::uint8_t>& out, std::uint32_t id, const TableHits& req) {
  std::size_t start = begin_frame(out, static_cast<std::uint8_t>(Op::table_hits), Status::ok, 0, id);
  WireWriter w{out};
  w.u32(static_cast<std::uint32_t>(req.generation >> 32));
  w.u32(static_cast<std::uint32_t>(req.generation));
  w.u32(static_cast<std::uint32_t>(req.hits >> 32));
  w.u32(static_cast<std::uint32_t>(req.hits));
  w.u32(static_cast<std::uint32_t>(req.slots.size()));
  for (std::uint32_t slot : req.slots) w.u32(slot);
  finish_frame(out, start);
}

Decoded<TableHits> decode_table_hits(Bytes payload) {
  using D = Decoded<TableHits>;
  if (payload.size() < 20 || payload.size() % 4 != 0)
    return D::failure(size_error("TABLE_HITS", payload.size(), "20 + 4 per slot"));
  WireReader r{payload};
  TableHits req;
  req.generation = std::uint64_t{r.u32()} << 32;
  req.generation |= r.u32();
  req.hits = std::uint64_t{r.u32()} << 32;
  req.hits |= r.u32();
  const std::uint32_t count = r.u32();
  if (count != (payload.size() - 20) / 4)
    return D::failure("TABLE_HITS names " + std::to_string(count) + " slots but carries " +
                      std::to_string((payload.size() - 20) / 4));
  req.slots.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) req.slots.push_back(r.u32());
  return req;
}

void append_empty_request(std::vector<std::uint8_t>& out, std::uint32_t id, Op op) {
  finish_frame(out, begin_frame(out, static_cast<std::uint8_t>(op), Status::ok, 0, id));
}

void append_empty_reply(std::vector<std::uint8_t>& out, std::uint32_t id, Op op, Status status) {
  finish_frame(out, begin_frame(out, reply_op(op), status, 0, id));
}

Decoded<std::monostate> decode_empty(Op op, Bytes payload) {
  if (!payload.empty())
    return Decoded<std::monostate>::failure(size_error(to_string(op), payload.size(), "0"));
  return std::monostate{};
}

}  // namespace ibat::protocol
