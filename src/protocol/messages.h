// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Payload codecs of every native protocol v1 operation (docs/protocol.md "Operations"): encoders
// append a complete frame to an output buffer, decoders check every length and value and return
// either the message or a description of what is wrong with it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/resolve_types.h"
#include "core/types.h"
#include "protocol/frame.h"

namespace ibat::protocol {

// A decoded value, or the reason the payload does not match its op.
template <class T>
class Decoded {
 public:
  Decoded(T value) : v_(std::move(value)) {}  // NOLINT: implicit on purpose
  static Decoded failure(std::string message) { return Decoded(Failure{std::move(message)}); }
  explicit operator bool() const { return v_.index() == 0; }
  const T& value() const { return std::get<0>(v_); }
  T& value() { return std::get<0>(v_); }
  const std::string& error() const { return std::get<1>(v_).message; }

 private:
  struct Failure {
    std::string message;
  };
  explicit Decoded(Failure f) : v_(std::move(f)) {}
  std::variant<T, Failure> v_;
};

// Target types of a RESOLVE request.
enum class TargetType : std::uint8_t { gid = 1, lid = 2, ipv4 = 3, ipv6 = 4, hw = 5 };
// RESOLVE request flag bits.
inline constexpr std::uint8_t kResolveCacheOnly = 0x01;
inline constexpr std::uint8_t kResolveForceSa = 0x02;
inline constexpr std::uint8_t kResolveSgid = 0x04;
inline constexpr std::uint8_t kResolvePkey = 0x08;
// What the SM's QoS policy may answer by: any of these adds the QoS trailer after the target.
inline constexpr std::uint8_t kResolveServiceId = 0x10;
inline constexpr std::uint8_t kResolveQosClass = 0x20;
inline constexpr std::uint8_t kResolveTclass = 0x40;
inline constexpr std::uint8_t kResolveQosFields = kResolveServiceId | kResolveQosClass | kResolveTclass;
inline constexpr std::size_t kResolveFixedSize = 24;
inline constexpr std::size_t kResolveQosTrailerSize = 12;  // service_id u64, qos_class u16, tclass u8, 0
inline constexpr std::size_t kPathReplySize = 72;

// NEIGH_ADD / NEIGH_DEL bodies.
struct NeighAdd {
  core::IpAddr ip;
  core::HwAddr hw;
  std::optional<core::Lid> slid;
  bool operator==(const NeighAdd&) const = default;
};
struct NeighDel {
  core::IpAddr ip;
  bool operator==(const NeighDel&) const = default;
};
// FLUSH body: no dgid = everything; dgid without pkey = every P_Key of that destination.
struct FlushRequest {
  std::optional<core::Gid> dgid;   // unset: every destination
  std::optional<core::Pkey> pkey;  // with dgid: that P_Key only
  std::optional<core::Gid> sgid;   // only the paths from this source GID (one port of the host)
  bool operator==(const FlushRequest&) const = default;
};
// CANCEL body: the id of an earlier request on the same connection.
struct CancelRequest {
  std::uint32_t target_id = 0;
  bool operator==(const CancelRequest&) const = default;
};

// PATHS body: where the page starts (0: the beginning, else a `next` cursor of an earlier page)
// and how many entries it may hold (0: the daemon's page size, which is also the maximum).
struct PathsRequest {
  std::uint32_t cursor = 0;
  std::uint32_t limit = 0;
  bool operator==(const PathsRequest&) const = default;
};
// PATHS reply body (its chunks concatenated): the cursor of the next page (0: this is the last)
// and a JSON array of entries.
struct PathsPage {
  std::uint32_t next = 0;
  std::string json;
  bool operator==(const PathsPage&) const = default;
};
inline constexpr std::uint32_t kPathsPageSize = 1000;
// TABLE_HITS body: hits a client answered from the shared path table (docs/shared-table.md), and
// the distinct slots they came from in table generation `generation`.
inline constexpr std::size_t kMaxTableHitSlots = (kMaxPayload - 20) / 4;
struct TableHits {
  std::uint64_t generation = 0;
  std::uint64_t hits = 0;
  std::vector<std::uint32_t> slots;
  bool operator==(const TableHits&) const = default;
};

// --- encoders: each appends one complete frame to `out` ---
void append_resolve_request(std::vector<std::uint8_t>& out, std::uint32_t id,
                            const core::ResolveRequest& request);
void append_neigh_add(std::vector<std::uint8_t>& out, std::uint32_t id, const NeighAdd& request);
void append_neigh_del(std::vector<std::uint8_t>& out, std::uint32_t id, const NeighDel& request);
void append_flush(std::vector<std::uint8_t>& out, std::uint32_t id, const FlushRequest& request);
void append_cancel(std::vector<std::uint8_t>& out, std::uint32_t id, const CancelRequest& request);
void append_paths_request(std::vector<std::uint8_t>& out, std::uint32_t id, const PathsRequest& request);
// PATHS reply: the page as chunked frames (MORE on all but the last).
void append_paths_reply(std::vector<std::uint8_t>& out, std::uint32_t id, const PathsPage& page);
// TABLE_HITS: at most kMaxTableHitSlots slots.
void append_table_hits(std::vector<std::uint8_t>& out, std::uint32_t id, const TableHits& request);
// NEIGH_LIST, PATHS (first page), STATS, WATCH: requests with an empty payload.
void append_empty_request(std::vector<std::uint8_t>& out, std::uint32_t id, Op op);

// RESOLVE reply: status from result.error; the 72-byte path payload only when ok.
void append_resolve_reply(std::vector<std::uint8_t>& out, std::uint32_t id,
                          const core::ResolveResult& result);
// Reply with an empty payload (NEIGH_ADD, NEIGH_DEL, CANCEL, or any op with an error status).
void append_empty_reply(std::vector<std::uint8_t>& out, std::uint32_t id, Op op, Status status);
// FLUSH ok reply: how many cache entries were dropped.
void append_flush_reply(std::vector<std::uint8_t>& out, std::uint32_t id, std::uint32_t dropped);

// --- decoders: payload only; the op comes from the header ---
Decoded<core::ResolveRequest> decode_resolve_request(std::span<const std::uint8_t> payload);
Decoded<NeighAdd> decode_neigh_add(std::span<const std::uint8_t> payload);
Decoded<NeighDel> decode_neigh_del(std::span<const std::uint8_t> payload);
Decoded<FlushRequest> decode_flush(std::span<const std::uint8_t> payload);
Decoded<CancelRequest> decode_cancel(std::span<const std::uint8_t> payload);
// An empty payload is the first page with the daemon's page size.
Decoded<PathsRequest> decode_paths_request(std::span<const std::uint8_t> payload);
Decoded<PathsPage> decode_paths_reply(std::span<const std::uint8_t> body);
Decoded<TableHits> decode_table_hits(std::span<const std::uint8_t> payload);
// Checks that a request that carries no body (NEIGH_LIST, PATHS, STATS, WATCH) has none.
Decoded<std::monostate> decode_empty(Op op, std::span<const std::uint8_t> payload);
// A FLUSH ok reply: the count, or nullopt for the empty payload of an ibatd that does not send it.
Decoded<std::optional<std::uint32_t>> decode_flush_reply(std::span<const std::uint8_t> payload);
// A RESOLVE reply given its header status: an error result (empty payload) or a path.
Decoded<core::ResolveResult> decode_resolve_reply(Status status, std::span<const std::uint8_t> payload);

}  // namespace ibat::protocol
