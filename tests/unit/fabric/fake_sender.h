// Test doubles for fabric/: a MadSender that records every MAD, and builders for the answers a
// real SA / SM would send back.
#pragma once

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
  out.slid = slid;
  out.source_qpn = 1;
  return out;
}

inline ReceivedMad path_answer(const OutgoingMad& request, const core::PathRecord& path, core::Lid slid) {
  const auto record = mad::encode_path_record(path);
  return sa_answer(request, mad::attr::kPathRecord, record, slid);
}

}  // namespace ibat::fabric::test
