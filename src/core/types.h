// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Value types shared by every layer: GIDs, LIDs, P_Keys, IPoIB hardware addresses, path records
// and the error codes a resolve can complete with. Parsing, formatting and validation live here.
#pragma once

#include <array>
#include <cstdint>
#include <compare>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ibat::core {

// 128-bit InfiniBand GID (subnet prefix + interface id), stored in network byte order.
struct Gid {
  std::array<std::uint8_t, 16> raw{};

  static std::optional<Gid> parse(std::string_view text);  // "fe80::506b:4b03:43:f9e3"
  static Gid from_parts(std::uint64_t subnet_prefix, std::uint64_t interface_id);
  std::string to_string() const;
  std::uint64_t subnet_prefix() const;
  std::uint64_t interface_id() const;  // the port GUID for a default GID
  bool is_zero() const;
  auto operator<=>(const Gid&) const = default;
  // Two 64-bit compares: the defaulted == called memcmp, a top cost of cache lookups.
  bool operator==(const Gid& other) const {
    std::uint64_t a[2], b[2];
    std::memcpy(a, raw.data(), 16);
    std::memcpy(b, other.raw.data(), 16);
    return ((a[0] ^ b[0]) | (a[1] ^ b[1])) == 0;
  }
};

// 16-bit Local Identifier. 0 is reserved (never a valid destination); 0xC000+ is multicast.
struct Lid {
  std::uint16_t value = 0;

  static std::optional<Lid> parse(std::string_view text);  // decimal or 0x-hex
  bool is_valid_unicast() const { return value != 0 && value < 0xC000; }
  std::string to_string() const { return std::to_string(value); }
  auto operator<=>(const Lid&) const = default;
};

// 16-bit partition key; the top bit is the membership bit (1 = full member).
struct Pkey {
  std::uint16_t value = 0xFFFF;

  static std::optional<Pkey> parse(std::string_view text);  // "0xffff", "0x7fff", "65535"
  std::string to_string() const;                            // "0xffff"
  std::uint16_t base() const { return value & 0x7FFF; }
  bool is_valid() const { return base() != 0; }
  auto operator<=>(const Pkey&) const = default;
};

// IPoIB link-layer address: 1 flags byte + 24-bit QPN + 16-byte GID (20 bytes).
struct HwAddr {
  std::array<std::uint8_t, 20> raw{};

  static std::optional<HwAddr> parse(std::string_view text);  // "80:00:00:48:fe:80:...:f9:e3"
  static HwAddr from(std::uint32_t qpn, const Gid& gid, std::uint8_t flags = 0x80);
  std::string to_string() const;
  std::uint32_t qpn() const;
  Gid gid() const;
  auto operator<=>(const HwAddr&) const = default;
};

// IPv4 or IPv6 address, stored as 16 bytes (IPv4 as ::ffff:a.b.c.d).
struct IpAddr {
  std::array<std::uint8_t, 16> raw{};
  bool v4 = false;

  static std::optional<IpAddr> parse(std::string_view text);
  static IpAddr from_v4(std::uint32_t host_order);
  std::string to_string() const;
  auto operator<=>(const IpAddr&) const = default;
};

// IBA MTU enumeration (1=256 .. 5=4096).
std::optional<std::uint32_t> mtu_bytes(std::uint8_t code);
// IBA static rate enumeration (2=2.5 Gb/s, 3=10, 6=30, 7=5, 10=14, 16=100 ...); nullopt if unknown.
std::optional<double> rate_gbps(std::uint8_t code);

// A decoded SA PathRecord (IBA 15.2.5.16), host byte order, selector bits kept apart from values.
struct PathRecord {
  std::uint64_t service_id = 0;
  Gid dgid;
  Gid sgid;
  Lid dlid;
  Lid slid;
  bool raw_traffic = false;
  std::uint32_t flow_label = 0;   // 20 bits
  std::uint8_t hop_limit = 0;
  std::uint8_t tclass = 0;
  bool reversible = false;
  std::uint8_t numb_path = 0;     // 7 bits
  Pkey pkey;
  std::uint16_t qos_class = 0;    // 12 bits
  std::uint8_t sl = 0;            // 4 bits
  std::uint8_t mtu_selector = 0;  // 2 bits
  std::uint8_t mtu = 0;           // 6-bit code
  std::uint8_t rate_selector = 0;
  std::uint8_t rate = 0;          // 6-bit code
  std::uint8_t pkt_life_selector = 0;
  std::uint8_t pkt_life = 0;      // 6-bit code: 4.096 us * 2^code
  std::uint8_t preference = 0;

  // A path may be handed to a client only if this holds: non-zero unicast DLID and SLID,
  // known MTU and rate codes, non-zero DGID and a valid P_Key (docs/design.md §3, invariant 3).
  bool is_servable() const;
  bool operator==(const PathRecord&) const = default;
};

// How a resolve ended. Every accepted request completes exactly once with one of these.
enum class Error : std::uint8_t {
  ok = 0,
  timeout,      // no answer within the request's deadline (SA silent, fabric frozen, lossy)
  unreachable,  // destination known to be out of service, port down, or no neighbour entry
  no_record,    // the SA answered: no path to that destination
  overloaded,   // a waiter or pending cap was hit; retry later
  cancelled,    // the client cancelled, or the daemon is shutting down
  invalid,      // bad request (zero GID, bad P_Key) or an SA answer that failed validation
};
std::string_view to_string(Error e);
std::optional<Error> error_from_string(std::string_view s);

}  // namespace ibat::core

template <>
struct std::hash<ibat::core::Gid> {
  std::size_t operator()(const ibat::core::Gid& g) const noexcept;
};
