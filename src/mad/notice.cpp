// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Encoding and decoding of the SA Notice, and the Report/ReportResp MADs that carry it.
#include "mad/notice.h"

#include <algorithm>
#include <string>

#include "wire/byte_order.h"

namespace ibat::mad {

std::optional<core::Gid> Notice::gid_in_out_of_service() const {
  if (!is_generic || (trap_number != kTrapGidInService && trap_number != kTrapGidOutOfService)) {
    return std::nullopt;
  }
  return wire::get_gid(data_details, 6);
}

Notice gid_service_notice(std::uint16_t trap_number, const core::Gid& gid, core::Lid issuer,
                          const core::Gid& issuer_gid) {
  Notice n;
  n.type = 3;                  // informational
  n.producer_type = 4;         // subnet management
  n.trap_number = trap_number;
  n.issuer_lid = issuer;
  n.issuer_gid = issuer_gid;
  wire::put_gid(n.data_details, 6, gid);
  return n;
}

std::array<std::uint8_t, kNoticeSize> encode_notice(const Notice& n) {
  std::array<std::uint8_t, kNoticeSize> out{};
  std::span<std::uint8_t> b(out);
  wire::put8(b, 0, (std::uint32_t{n.is_generic} << 7) | wire::bits8(n.type, 7));
  wire::put24(b, 1, n.producer_type & 0xFFFFFFU);
  wire::put16(b, 4, n.trap_number);
  wire::put16(b, 6, n.issuer_lid.value);
  wire::put16(b, 8, (std::uint32_t{n.toggle} << 15) | (n.count & 0x7FFFU));
  std::copy(n.data_details.begin(), n.data_details.end(), out.begin() + 10);
  wire::put_gid(b, 64, n.issuer_gid);
  return out;
}

Result<Notice> decode_notice(std::span<const std::uint8_t> b) {
  if (b.size() < kNoticeSize) return too_short("Notice", kNoticeSize, b.size());
  Notice n;
  n.is_generic = (b[0] >> 7) != 0;
  n.type = wire::bits8(b[0], 7);
  n.producer_type = wire::get24(b, 1);
  n.trap_number = wire::get16(b, 4);
  n.issuer_lid.value = wire::get16(b, 6);
  const std::uint16_t toggle_count = wire::get16(b, 8);
  n.toggle = (toggle_count >> 15) != 0;
  n.count = toggle_count & 0x7FFF;
  std::copy_n(b.begin() + 10, kNoticeDataDetailsSize, n.data_details.begin());
  n.issuer_gid = wire::get_gid(b, 64);
  return n;
}

Result<Report> decode_report(std::span<const std::uint8_t> b) {
  auto mad = decode_sa_mad(b);
  if (!mad) return mad.error();
  const MadHeader& h = mad->header;
  if (h.mgmt_class != mgmt_class::kSubnAdm || h.method != method::kReport ||
      h.attr_id != attr::kNotice) {
    return DecodeError{"Report: not a SubnAdmReport(Notice) (class " + std::to_string(h.mgmt_class) +
                       ", method " + std::to_string(h.method) + ", attribute " +
                       std::to_string(h.attr_id) + ")"};
  }
  auto notice = decode_notice(mad->data);
  if (!notice) return notice.error();
  return Report{h, *notice};
}

MadBuffer build_report(std::uint64_t tid, const Notice& notice) {
  const auto record = encode_notice(notice);
  return build_sa_mad(sa_request_header(method::kReport, tid, attr::kNotice), SaHeader{}, record);
}

MadBuffer build_report_resp(const Report& report) {
  MadHeader h = report.header;
  h.method = method::kReportResp;
  h.status = 0;
  const auto record = encode_notice(report.notice);
  return build_sa_mad(h, SaHeader{}, record);
}

}  // namespace ibat::mad
