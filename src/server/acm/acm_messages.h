// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ACM protocol v1 messages as values, and the pure codec between them and bytes.
//
// Wire layout (rdma-core acm.h): a 16-byte header
//   0 version(=1)  1 opcode  2 status  3 data[3]  6 length(2)  8 tid(8)
// followed by length-16 bytes of body. Byte order is what rdma-core does, not what one would guess:
//   * RESOLVE (opcode 1): header length and the flags/type of each acm_ep_addr_data entry are in
//     HOST byte order; the path record inside an entry is in network order.
//   * PERF_QUERY (2) and EP_QUERY (3): header length, counters and ep config fields are in network
//     order (the flags/type of a PERF_QUERY address entry stay in host order, as libacm writes them).
//   * tid is never interpreted; a response echoes the request's 8 bytes.
// A message is at most 592 bytes (sizeof(struct acm_msg)); ibacm reads one per recv().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/types.h"
#include "server/acm/acm_constants.h"

namespace ibat::acm {

using Tid = std::array<std::uint8_t, 8>;

// One acm_ep_addr_data entry: an address by name, IPv4/IPv6, or a path record.
struct EpAddr {
  std::uint32_t flags = 0;  // kEpFlagSource / kEpFlagDest, plus kFlagQuerySa / kFlagNoDelay
  std::variant<std::string, core::IpAddr, core::PathRecord> address;  // name (<= 63 chars) / IP / path
  bool operator==(const EpAddr&) const = default;
};

// RESOLVE whose first entry is a path: find the path to the DGID (or DLID) it names; SGID / SLID
// pick the local port when set. flags carries kFlagQuerySa / kFlagNoDelay.
struct ResolvePathRequest {
  Tid tid{};
  std::uint32_t flags = 0;
  core::PathRecord path;
};

// RESOLVE by address: the destination (and optionally the source) as name, IPv4 or IPv6.
struct ResolveAddressRequest {
  Tid tid{};
  std::optional<EpAddr> source;
  EpAddr dest;  // dest.flags carries kFlagNoDelay when the client asked for cached data only
};

// PERF_QUERY: ep_index 0 and no source = the service-wide counters; ep_index N >= 1 = endpoint N;
// a source address = the endpoint owning that address.
struct PerfQueryRequest {
  Tid tid{};
  std::uint8_t ep_index = 0;
  std::optional<EpAddr> source;
};

// EP_QUERY: describe endpoint ep_index (1-based) on port `port` (0 = any port).
struct EpQueryRequest {
  Tid tid{};
  std::uint8_t ep_index = 0;
  std::uint8_t port = 0;
};

using Request = std::variant<ResolvePathRequest, ResolveAddressRequest, PerfQueryRequest, EpQueryRequest>;

// A request that cannot be served. fatal: the stream can't be trusted (bad version, unknown opcode,
// impossible length): close the connection, as ibacm does. Otherwise answer
// encode_status_response(opcode, tid, status) and keep the connection.
struct RequestError {
  std::string message;
  bool fatal = false;
  Opcode opcode = Opcode::resolve;
  Tid tid{};
  Status status = Status::einval;
};

// How much of a byte stream the first message occupies.
struct Framing {
  enum class Kind { need_more, complete, invalid } kind = Kind::need_more;
  std::size_t length = 0;  // complete: message length in bytes
  std::string error;       // invalid: why (the connection should be closed)
};
Framing frame(std::span<const std::uint8_t> stream);

// Decodes one complete message (exactly `length` bytes as given by frame()).
std::variant<Request, RequestError> decode_request(std::span<const std::uint8_t> message);

struct ResolveResponse {
  Tid tid{};
  Status status = Status::success;
  core::PathRecord path;               // success: entry 0, flags GMP|PRIMARY|BIDIRECTIONAL
  std::optional<EpAddr> source;        // success: entry 1, the source the service picked
};

struct PerfQueryResponse {
  Tid tid{};
  Status status = Status::success;
  std::vector<std::uint64_t> counters;  // the 7 of Counter order for the service; at most kMaxCounters
};

struct EpConfig {
  std::uint64_t dev_guid = 0;
  std::uint8_t port_num = 0;
  std::uint8_t phys_port_cnt = 0;
  core::Pkey pkey;
  std::string provider;                 // at most 63 characters are sent
  std::vector<std::string> addresses;   // at most kMaxEpAddresses, each at most 63 characters
};

struct EpQueryResponse {
  Tid tid{};
  Status status = Status::success;
  EpConfig ep;  // sent only on success
};

std::vector<std::uint8_t> encode(const ResolveResponse& response);
std::vector<std::uint8_t> encode(const PerfQueryResponse& response);
std::vector<std::uint8_t> encode(const EpQueryResponse& response);
// A header-only response carrying an error status, in the byte order of `opcode`.
std::vector<std::uint8_t> encode_status_response(Opcode opcode, const Tid& tid, Status status);

}  // namespace ibat::acm
