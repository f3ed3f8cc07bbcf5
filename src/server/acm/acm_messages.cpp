// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ACM protocol v1 codec (see acm_messages.h for the layout and its byte-order rules).
#include "server/acm/acm_messages.h"

#include <algorithm>
#include <cstring>

#include "server/acm/path_record_wire.h"
#include "wire/byte_order.h"

namespace ibat::acm {
namespace {

constexpr std::size_t kLengthOffset = 6;
constexpr std::size_t kTidOffset = 8;
constexpr std::size_t kEpInfoOffset = 8;  // within an acm_ep_addr_data entry

// Host-order fields (RESOLVE lengths, ep entry flags/type), as rdma-core writes them with plain stores.
template <typename T>
T load_host(std::span<const std::uint8_t> b, std::size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

template <typename T>
void store_host(std::span<std::uint8_t> b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

bool known_opcode(std::uint8_t op) {
  return op == static_cast<std::uint8_t>(Opcode::resolve) || op == static_cast<std::uint8_t>(Opcode::perf_query) ||
         op == static_cast<std::uint8_t>(Opcode::ep_query);
}

std::size_t header_length(std::span<const std::uint8_t> b) {
  return b[1] == static_cast<std::uint8_t>(Opcode::resolve) ? load_host<std::uint16_t>(b, kLengthOffset)
                                                            : wire::get16(b, kLengthOffset);
}

std::string name_from(std::span<const std::uint8_t> info) {
  const auto end = std::find(info.begin(), info.end(), std::uint8_t{0});
  return std::string(info.begin(), end);
}

void put_name(std::span<std::uint8_t> out, const std::string& name) {
  const std::size_t n = std::min(name.size(), kMaxAddress - 1);  // always NUL-terminated
  std::copy_n(name.begin(), n, out.begin());
}

// Decodes the address of an entry at `at`; nullopt for a type that is not name/IP/IPv6/path.
std::optional<EpAddr> decode_entry(std::span<const std::uint8_t> msg, std::size_t at) {
  EpAddr ep;
  ep.flags = load_host<std::uint32_t>(msg, at);
  const auto info = msg.subspan(at + kEpInfoOffset, kMaxAddress);
  switch (static_cast<EpType>(load_host<std::uint16_t>(msg, at + 4))) {
    case EpType::name: ep.address = name_from(info); return ep;
    case EpType::ip: ep.address = core::IpAddr::from_v4(wire::get32(info, 0)); return ep;
    case EpType::ip6: {
      core::IpAddr ip;
      std::copy_n(info.begin(), 16, ip.raw.begin());
      ep.address = ip;
      return ep;
    }
    case EpType::path: ep.address = decode_path_record(info.first<kPathRecordLength>()); return ep;
  }
  return std::nullopt;
}

void encode_entry(std::span<std::uint8_t> out, const EpAddr& ep) {
  store_host<std::uint32_t>(out, 0, ep.flags);
  const auto info = out.subspan(kEpInfoOffset, kMaxAddress);
  if (const auto* name = std::get_if<std::string>(&ep.address)) {
    store_host<std::uint16_t>(out, 4, static_cast<std::uint16_t>(EpType::name));
    put_name(info, *name);
  } else if (const auto* ip = std::get_if<core::IpAddr>(&ep.address)) {
    store_host<std::uint16_t>(out, 4, static_cast<std::uint16_t>(ip->v4 ? EpType::ip : EpType::ip6));
    if (ip->v4)
      std::copy_n(ip->raw.begin() + 12, 4, info.begin());
    else
      std::copy_n(ip->raw.begin(), 16, info.begin());
  } else {
    store_host<std::uint16_t>(out, 4, static_cast<std::uint16_t>(EpType::path));
    encode_path_record(std::get<core::PathRecord>(ep.address), info.first<kPathRecordLength>());
  }
}

bool is_address(const EpAddr& ep) { return !std::holds_alternative<core::PathRecord>(ep.address); }

std::vector<std::uint8_t> header(Opcode opcode, const Tid& tid, Status status, std::size_t length) {
  std::vector<std::uint8_t> out(length, 0);
  out[0] = kVersion;
  out[1] = static_cast<std::uint8_t>(static_cast<std::uint8_t>(opcode) | kOpAck);
  out[2] = static_cast<std::uint8_t>(status);
  if (opcode == Opcode::resolve)
    store_host<std::uint16_t>(out, kLengthOffset, static_cast<std::uint16_t>(length));
  else
    wire::put16(out, kLengthOffset, static_cast<std::uint32_t>(length));
  std::copy(tid.begin(), tid.end(), out.begin() + kTidOffset);
  return out;
}

RequestError error(Opcode op, const Tid& tid, Status status, std::string message) {
  return RequestError{"ACM: " + std::move(message), false, op, tid, status};
}

std::variant<Request, RequestError> decode_resolve(std::span<const std::uint8_t> msg, const Tid& tid) {
  const std::size_t body = msg.size() - kHeaderLength;
  if (body % kEpLength != 0)
    return error(Opcode::resolve, tid, Status::einval,
                 "RESOLVE body of " + std::to_string(body) + " bytes is not a whole number of 72-byte entries");
  const std::size_t count = body / kEpLength;
  if (count == 0) return error(Opcode::resolve, tid, Status::edesttype, "RESOLVE without a destination");

  if (load_host<std::uint16_t>(msg, kHeaderLength + 4) == static_cast<std::uint16_t>(EpType::path)) {
    ResolvePathRequest r;
    r.tid = tid;
    const auto entry = decode_entry(msg, kHeaderLength);
    r.flags = entry->flags;
    r.path = std::get<core::PathRecord>(entry->address);
    if (r.path.dlid.value == 0 && r.path.dgid.is_zero())
      return error(Opcode::resolve, tid, Status::edestaddr, "RESOLVE path names neither a DGID nor a DLID");
    return r;
  }

  ResolveAddressRequest r;
  r.tid = tid;
  bool have_dest = false;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t at = kHeaderLength + i * kEpLength;
    const auto flags = load_host<std::uint32_t>(msg, at);
    if (!(flags & (kEpFlagSource | kEpFlagDest))) continue;  // e.g. librdmacm's path hint
    const auto entry = decode_entry(msg, at);
    const std::string where = "RESOLVE entry " + std::to_string(i) + " at offset " + std::to_string(at);
    if (flags & kEpFlagSource) {
      if (r.source) return error(Opcode::resolve, tid, Status::esrcaddr, where + ": a second source");
      if (!entry || !is_address(*entry))
        return error(Opcode::resolve, tid, Status::esrctype, where + ": source is not a name or IP address");
      r.source = *entry;
    }
    if (flags & kEpFlagDest) {
      if (have_dest) return error(Opcode::resolve, tid, Status::edestaddr, where + ": a second destination");
      if (!entry || !is_address(*entry))
        return error(Opcode::resolve, tid, Status::edesttype, where + ": destination is not a name or IP address");
      r.dest = *entry;
      have_dest = true;
    }
  }
  if (!have_dest) return error(Opcode::resolve, tid, Status::edesttype, "RESOLVE without a destination");
  return r;
}

std::variant<Request, RequestError> decode_perf_query(std::span<const std::uint8_t> msg, const Tid& tid) {
  PerfQueryRequest r;
  r.tid = tid;
  r.ep_index = msg[4];  // hdr.src_index
  if (msg.size() >= kHeaderLength + kEpLength && (load_host<std::uint32_t>(msg, kHeaderLength) & kEpFlagSource)) {
    const auto entry = decode_entry(msg, kHeaderLength);
    if (!entry || !is_address(*entry))
      return error(Opcode::perf_query, tid, Status::esrctype, "PERF_QUERY source is not a name or IP address");
    r.source = *entry;
  }
  return r;
}

std::variant<Request, RequestError> decode_ep_query(std::span<const std::uint8_t> msg, const Tid& tid) {
  EpQueryRequest r;
  r.tid = tid;
  r.ep_index = msg[3];  // hdr.src_out
  r.port = msg[4];      // hdr.src_index
  if (r.ep_index == 0) return error(Opcode::ep_query, tid, Status::einval, "EP_QUERY endpoint index 0 (they start at 1)");
  return r;
}

}  // namespace

Framing frame(std::span<const std::uint8_t> stream) {
  if (!stream.empty() && stream[0] != kVersion)
    return {Framing::Kind::invalid, 0, "ACM: unsupported version " + std::to_string(stream[0])};
  if (stream.size() >= 2 && !known_opcode(stream[1]))
    return {Framing::Kind::invalid, 0, "ACM: unknown request opcode " + std::to_string(stream[1])};
  if (stream.size() < kLengthOffset + 2) return {};
  const std::size_t length = header_length(stream);
  if (length < kHeaderLength || length > kMaxMessageLength)
    return {Framing::Kind::invalid, 0,
            "ACM: message length " + std::to_string(length) + " outside 16.." + std::to_string(kMaxMessageLength)};
  if (stream.size() < length) return {};
  return {Framing::Kind::complete, length, {}};
}

std::variant<Request, RequestError> decode_request(std::span<const std::uint8_t> message) {
  const Framing f = frame(message);
  if (f.kind != Framing::Kind::complete || f.length != message.size()) {
    RequestError e;
    e.fatal = true;
    e.message = f.kind == Framing::Kind::invalid
                    ? f.error
                    : "ACM: message of " + std::to_string(message.size()) + " bytes does not match its header length";
    return e;
  }
  Tid tid;
  std::copy_n(message.begin() + kTidOffset, tid.size(), tid.begin());
  switch (static_cast<Opcode>(message[1])) {
    case Opcode::resolve: return decode_resolve(message, tid);
    case Opcode::perf_query: return decode_perf_query(message, tid);
    case Opcode::ep_query: return decode_ep_query(message, tid);
  }
  return RequestError{"ACM: unreachable opcode", true, Opcode::resolve, tid, Status::einval};
}

std::vector<std::uint8_t> encode(const ResolveResponse& response) {
  if (response.status != Status::success) return encode_status_response(Opcode::resolve, response.tid, response.status);
  const std::size_t entries = response.source ? 2 : 1;
  auto out = header(Opcode::resolve, response.tid, Status::success, kHeaderLength + entries * kEpLength);
  const std::span<std::uint8_t> body(out.data() + kHeaderLength, entries * kEpLength);
  encode_entry(body.first(kEpLength), EpAddr{kPathFlagGmp | kPathFlagPrimary | kPathFlagBidirectional, response.path});
  if (response.source) encode_entry(body.subspan(kEpLength, kEpLength), *response.source);
  return out;
}

std::vector<std::uint8_t> encode(const PerfQueryResponse& response) {
  if (response.status != Status::success)
    return encode_status_response(Opcode::perf_query, response.tid, response.status);
  const std::size_t count = std::min(response.counters.size(), kMaxCounters);
  auto out = header(Opcode::perf_query, response.tid, Status::success, kHeaderLength + count * 8);
  out[3] = static_cast<std::uint8_t>(count);  // hdr.src_out: number of counters
  for (std::size_t i = 0; i < count; ++i) wire::put64(out, kHeaderLength + i * 8, response.counters[i]);
  return out;
}

std::vector<std::uint8_t> encode(const EpQueryResponse& response) {
  if (response.status != Status::success)
    return encode_status_response(Opcode::ep_query, response.tid, response.status);
  const EpConfig& ep = response.ep;
  const std::size_t count = std::min(ep.addresses.size(), kMaxEpAddresses);
  auto out = header(Opcode::ep_query, response.tid, Status::success,
                    kHeaderLength + kEpConfigLength + count * kMaxAddress);
  const std::span<std::uint8_t> body(out.data() + kHeaderLength, out.size() - kHeaderLength);
  wire::put64(body, 0, ep.dev_guid);
  body[8] = ep.port_num;
  body[9] = ep.phys_port_cnt;
  wire::put16(body, 12, ep.pkey.value);
  wire::put16(body, 14, static_cast<std::uint32_t>(count));
  put_name(body.subspan(16, kMaxAddress), ep.provider);
  for (std::size_t i = 0; i < count; ++i)
    put_name(body.subspan(kEpConfigLength + i * kMaxAddress, kMaxAddress), ep.addresses[i]);
  return out;
}

std::vector<std::uint8_t> encode_status_response(Opcode opcode, const Tid& tid, Status status) {
  return header(opcode, tid, status, kHeaderLength);
}

}  // namespace ibat::acm
