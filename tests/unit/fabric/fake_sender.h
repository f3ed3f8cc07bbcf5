// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Test doubles for fabric/: a MadSender that records every MAD, and builders for the answers a
// real SA / SM would send back.
#pragma once

#include <algorithm>
#include <vector>

#include "fabric/mad_io.h"
#include "mad/mad_header.h"
#include "mad/path_record.h"
#include "mad/sa_mad.h"
#include "wire/byte_order.h"

namespace ibat::fabric::test {

class FakeSender final : public MadSender {
 public:
  bool send(const OutgoingMad& mad) override {
    sent.push_back(mad);
    return accept;
  }
  std::vector<OutgoingMad> sent;
  bool accept = true;
};

inline std::uint64_t tid_of(const OutgoingMad& mad) { return wire::get64(mad.bytes, 8); }

// umad2sim / the kernel rewrite the upper 32 bits of the TID on the way out.
inline std::uint64_t rewritten_tid(std::uint64_t tid) { return (0xABCD0001ULL << 32) | mad::tid_low32(tid); }

// An SA GetResp to `request` carrying `record` (empty: no record), from `slid`.
inline ReceivedMad sa_answer(const OutgoingMad& request, std::uint16_t attr_id, std::span<const std::uint8_t> record,
                             core::Lid slid, std::uint16_t status = 0) {
  mad::MadHeader h = mad::sa_request_header(mad::method::kGetResp, rewritten_tid(tid_of(request)), attr_id);
  h.status = status;
  mad::SaHeader sa;
  sa.attr_offset = static_cast<std::uint16_t>(record.size() / 8);
  const mad::MadBuffer bytes = mad::build_sa_mad(h, sa, record);
  ReceivedMad out;
  out.bytes.assign(bytes.begin(), bytes.end());
  out.length = out.bytes.size();
  out.slid = slid;
  out.source_qpn = 1;
  return out;
}

// An SA GetTableResp to `request` as the kernel hands over a reassembled RMPP message: the SA
// header, then `records` (each padded to `stride` bytes), `length` exactly that; `bytes` at least
// 256, zero-filled.
inline ReceivedMad table_answer(const OutgoingMad& request, std::uint16_t attr_id,
                                const std::vector<std::vector<std::uint8_t>>& records, std::size_t stride,
                                core::Lid slid, std::uint16_t status = 0) {
  mad::MadHeader h = mad::sa_request_header(mad::method::kGetTableResp, rewritten_tid(tid_of(request)), attr_id);
  h.status = status;
  mad::SaHeader sa;
  sa.rmpp.version = 1;
  sa.rmpp.type = 1;                // DATA
  sa.rmpp.resp_time_flags = 0x03;  // ACTIVE | FIRST
  sa.attr_offset = records.empty() ? 0 : static_cast<std::uint16_t>(stride / 8);
  const mad::MadBuffer head = mad::build_sa_mad(h, sa, {});
  ReceivedMad out;
  out.bytes.assign(head.begin(), head.begin() + mad::kSaHeaderSize);
  for (const auto& record : records) {
    out.bytes.insert(out.bytes.end(), record.begin(), record.end());
    out.bytes.resize(out.bytes.size() + stride - record.size(), 0);
  }
  out.length = out.bytes.size();
  out.bytes.resize(std::max(out.length, mad::kMadSize), 0);
  out.slid = slid;
  out.source_qpn = 1;
  return out;
}

inline ReceivedMad path_answer(const OutgoingMad& request, const core::PathRecord& path, core::Lid slid) {
  const auto record = mad::encode_path_record(path);
  return sa_answer(request, mad::attr::kPathRecord, record, slid);
}

}  // namespace ibat::fabric::test
