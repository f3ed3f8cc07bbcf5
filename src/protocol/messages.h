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

#include "core/resolver.h"
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
inline constexpr std::size_t kResolveFixedSize = 24;
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
  std::optional<core::Gid> dgid;
  std::optional<core::Pkey> pkey;
  bool operator==(const FlushRequest&) const = default;
};
// CANCEL body: the id of an earlier request on the same connection.
struct CancelRequest {
  std::uint32_t target_id = 0;
  bool operator==(const CancelRequest&) const = default;
};

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
// At most kMaxTableHitSlots slots.
void append_table_hits(std::vector<std::uint8_t>& out, std::uint32_t id, const TableHits& request);
// NEIGH_LIST, PATHS, STATS, WATCH: requests with an empty payload.
void append_empty_request(std::vector<std::uint8_t>& out, std::uint32_t id, Op op);

// RESOLVE reply: status from result.error; the 72-byte path payload only when ok.
void append_resolve_reply(std::vector<std::uint8_t>& out, std::uint32_t id,
                          const core::ResolveResult& result);
// Reply with an empty payload (NEIGH_ADD, NEIGH_DEL, FLUSH, CANCEL, or any op with an error status).
void append_empty_reply(std::vector<std::uint8_t>& out, std::uint32_t id, Op op, Status status);

// --- decoders: payload only; the op comes from the header ---
Decoded<core::ResolveRequest> decode_resolve_request(std::span<const std::uint8_t> payload);
Decoded<NeighAdd> decode_neigh_add(std::span<const std::uint8_t> payload);
Decoded<NeighDel> decode_neigh_del(std::span<const std::uint8_t> payload);
Decoded<FlushRequest> decode_flush(std::span<const std::uint8_t> payload);
Decoded<CancelRequest> decode_cancel(std::span<const std::uint8_t> payload);
Decoded<TableHits> decode_table_hits(std::span<const std::uint8_t> payload);
// Checks that a request that carries no body (NEIGH_LIST, PATHS, STATS, WATCH) has none.
Decoded<std::monostate> decode_empty(Op op, std::span<const std::uint8_t> payload);
// A RESOLVE reply given its header status: an error result (empty payload) or a path.
Decoded<core::ResolveResult> decode_resolve_reply(Status status, std::span<const std::uint8_t> payload);

}  // namespace ibat::protocol
