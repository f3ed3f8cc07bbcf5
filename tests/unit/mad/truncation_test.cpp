// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Truncated buffers: every decoder, fed every prefix of a valid input in an exactly-sized heap
// buffer (so ASan sees any overread), fails with a message below its minimum size and succeeds
// from it on.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "golden_file.h"
#include "mad/inform_info.h"
#include "mad/mcmember_record.h"
#include "mad/notice.h"
#include "mad/path_record.h"
#include "mad/port_info.h"
#include "mad/sa_mad.h"
#include "mad/sm_info.h"
#include "mad/smp.h"

namespace ibat::mad {
namespace {

// Calls decode(prefix) for each prefix length of `full`; returns whether it succeeded.
using Decoder = std::function<bool(std::span<const std::uint8_t>)>;

void expect_fails_below(const std::vector<std::uint8_t>& full, std::size_t minimum,
                        const Decoder& decode) {
  ASSERT_LE(minimum, full.size());
  for (std::size_t len = 0; len <= full.size(); ++len) {
    const std::vector<std::uint8_t> prefix(full.begin(), full.begin() + static_cast<long>(len));
    EXPECT_EQ(decode(prefix), len >= minimum) << "length " << len;
  }
}

template <class T>
bool failed_with_message(const Result<T>& r) {
  return !r.ok() && !r.error().message.empty();
}

template <auto Decode>
Decoder plain() {
  return [](std::span<const std::uint8_t> b) {
    auto r = Decode(b);
    EXPECT_TRUE(r.ok() || failed_with_message(r));
    return r.ok();
  };
}

TEST(Truncation, MadHeader) {
  expect_fails_below(test::load_golden("pr_lid.request.hex"), kMadHeaderSize,
                     plain<decode_mad_header>());
}

TEST(Truncation, SaMadAndItsFirstRecord) {
  const auto full = test::load_golden("pr_lid.response.hex");
  expect_fails_below(full, kSaHeaderSize, plain<decode_sa_mad>());
  expect_fails_below(full, kSaHeaderSize + kPathRecordSize, [](std::span<const std::uint8_t> b) {
    auto mad = decode_sa_mad(b);
    if (!mad) return false;
    auto record = first_record(*mad);
    EXPECT_TRUE(record.ok() || failed_with_message(record));
    return record.ok() && decode_path_record(*record).ok();
  });
}

TEST(Truncation, Records) {
  const auto pr = test::load_golden("pr_lid.response.hex");
  expect_fails_below({pr.begin() + kSaHeaderSize, pr.end()}, kPathRecordSize,
                     plain<decode_path_record>());
  const auto mcmr = test::load_golden("mcmr.response.hex");
  expect_fails_below({mcmr.begin() + kSaHeaderSize, mcmr.end()}, kMcMemberRecordSize,
                     plain<decode_mcmember_record>());
  const auto inform = encode_inform_info(trap_subscription(kTrapGidInService));
  expect_fails_below({inform.begin(), inform.end()}, kInformInfoSize, plain<decode_inform_info>());
  const auto notice = encode_notice(
      gid_service_notice(kTrapGidInService, core::Gid::from_parts(0xfe80ULL << 48, 9),
                         core::Lid{1}, core::Gid{}));
  expect_fails_below({notice.begin(), notice.end()}, kNoticeSize, plain<decode_notice>());
  const auto report = build_report(1, Notice{});
  expect_fails_below({report.begin(), report.end()}, kSaHeaderSize + kNoticeSize,
                     plain<decode_report>());
}

TEST(Truncation, SmpAttributes) {
  const auto lid_routed = test::load_golden("portinfo_lid.response.hex");
  expect_fails_below(lid_routed, kSmpHeaderSize + kSmpDataSize, plain<decode_smp>());
  expect_fails_below({lid_routed.begin() + kSmpHeaderSize, lid_routed.end()}, kPortInfoSize,
                     plain<decode_port_info>());
  const auto sminfo = test::load_golden("sminfo.response.hex");
  expect_fails_below({sminfo.begin() + kSmpHeaderSize, sminfo.end()}, kSmInfoSize,
                     plain<decode_sm_info>());
}

TEST(Truncation, DirectedRouteSmpNeedsItsReturnPath) {
  // hop count 1: paths up to byte 192 + 2 must be present.
  expect_fails_below(test::load_golden("portinfo_dr1.response.hex"), 194, plain<decode_smp>());
}

}  // namespace
}  // namespace ibat::mad
