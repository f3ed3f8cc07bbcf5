// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA Notice (IBA 13.4.8.2) as delivered in a SubnAdmReport, and the ReportResp that must answer
// every Report. Traps 64 and 65 (GID in / out of service) carry the GID in their data details.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "core/types.h"
#include "mad/sa_mad.h"

namespace ibat::mad {

inline constexpr std::size_t kNoticeSize = 80;
inline constexpr std::size_t kNoticeDataDetailsSize = 54;
inline constexpr std::uint16_t kTrapGidInService = 64;
inline constexpr std::uint16_t kTrapGidOutOfService = 65;

struct Notice {
  bool is_generic = true;
  std::uint8_t type = 0;            // 7 bits
  std::uint32_t producer_type = 0;  // 24 bits (vendor ID when not generic)
  std::uint16_t trap_number = 0;    // device ID when not generic
  core::Lid issuer_lid;
  bool toggle = false;
  std::uint16_t count = 0;          // 15 bits
  std::array<std::uint8_t, kNoticeDataDetailsSize> data_details{};
  core::Gid issuer_gid;

  // The GID carried by a generic trap 64/65 (data details bytes 6..21); nullopt for other notices.
  std::optional<core::Gid> gid_in_out_of_service() const;
  bool operator==(const Notice&) const = default;
};

// A generic trap 64/65 notice for `gid`, issued by the SM at `issuer`.
Notice gid_service_notice(std::uint16_t trap_number, const core::Gid& gid, core::Lid issuer,
                          const core::Gid& issuer_gid);

std::array<std::uint8_t, kNoticeSize> encode_notice(const Notice& notice);
Result<Notice> decode_notice(std::span<const std::uint8_t> bytes);

// A SubnAdmReport(Notice) as received: its header (TID to echo) and the notice.
struct Report {
  MadHeader header;
  Notice notice;
};
// Checks class, method (Report) and attribute (Notice) before decoding the notice.
Result<Report> decode_report(std::span<const std::uint8_t> bytes);
// A SubnAdmReport MAD (what OpenSM sends); used by tests and fake SAs.
MadBuffer build_report(std::uint64_t tid, const Notice& notice);
// The SubnAdmReportResp answering `report`: same TID (all 64 bits), same notice.
MadBuffer build_report_resp(const Report& report);

}  // namespace ibat::mad
