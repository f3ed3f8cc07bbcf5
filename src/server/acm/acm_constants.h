// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ACM protocol version 1 constants, as rdma-core's <infiniband/acm.h> defines them (the protocol
// ibacm serves and ib_acme / librdmacm speak over a Unix or TCP stream socket).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace ibat::acm {

inline constexpr std::uint8_t kVersion = 1;

inline constexpr std::uint8_t kOpMask = 0x0F;
inline constexpr std::uint8_t kOpAck = 0x80;  // set in responses
enum class Opcode : std::uint8_t { resolve = 0x01, perf_query = 0x02, ep_query = 0x03 };

enum class Status : std::uint8_t {
  success = 0,
  enomem = 1,
  einval = 2,
  enodata = 3,
  enotconn = 5,
  etimedout = 6,
  esrcaddr = 7,
  esrctype = 8,
  edestaddr = 9,
  edesttype = 10,
};

// acm_ep_addr_data.type
enum class EpType : std::uint16_t { name = 0x0001, ip = 0x0002, ip6 = 0x0003, path = 0x0010 };

// acm_ep_addr_data.flags
inline constexpr std::uint32_t kEpFlagSource = 1u << 0;
inline constexpr std::uint32_t kEpFlagDest = 1u << 1;
inline constexpr std::uint32_t kFlagQuerySa = 1u << 31;  // ib_acme -v: ask the SA, bypass the cache
inline constexpr std::uint32_t kFlagNoDelay = 1u << 30;  // ib_acme -c: answer from the cache only

// ibv_path_data flags that ibacm puts on a returned path entry (infiniband/sa.h).
inline constexpr std::uint32_t kPathFlagGmp = 1u << 0;
inline constexpr std::uint32_t kPathFlagPrimary = 1u << 1;
inline constexpr std::uint32_t kPathFlagOutbound = 1u << 3;
inline constexpr std::uint32_t kPathFlagInboundReverse = 1u << 5;
inline constexpr std::uint32_t kPathFlagBidirectional = kPathFlagOutbound | kPathFlagInboundReverse;

inline constexpr std::size_t kHeaderLength = 16;   // ACM_MSG_HDR_LENGTH
inline constexpr std::size_t kMaxAddress = 64;     // ACM_MAX_ADDRESS
inline constexpr std::size_t kEpLength = 72;       // ACM_MSG_EP_LENGTH = sizeof(acm_ep_addr_data)
inline constexpr std::size_t kMaxDataLength = kEpLength * 8;                // ACM_MSG_DATA_LENGTH
inline constexpr std::size_t kMaxMessageLength = kHeaderLength + kMaxDataLength;  // sizeof(acm_msg)
inline constexpr std::size_t kPathRecordLength = 64;  // sizeof(ibv_path_record)
inline constexpr std::size_t kEpConfigLength = 80;    // sizeof(acm_ep_config_data) without addrs
inline constexpr std::size_t kMaxEpAddresses = (kMaxDataLength - kEpConfigLength) / kMaxAddress;
inline constexpr std::size_t kMaxCounters = kMaxDataLength / 8;

// The 7 counters of a PERF_QUERY answer, in wire order, with the labels ib_acme prints.
enum class Counter : std::size_t {
  error = 0,
  resolve,
  no_data,
  addr_query,
  addr_cache,
  route_query,
  route_cache,
};
inline constexpr std::size_t kCounterCount = 7;
inline constexpr std::array<const char*, kCounterCount> kCounterLabels = {
    "Error Count",      "Resolve Count",     "No Data",          "Addr Query Count",
    "Addr Cache Count", "Route Query Count", "Route Cache Count"};

}  // namespace ibat::acm
