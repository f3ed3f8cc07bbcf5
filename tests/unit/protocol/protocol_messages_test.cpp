// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Payload codecs of every native protocol operation: round trips, every truncation and extension
// of each payload rejected with a message, bad field values rejected, RESOLVE byte layout pinned.
#include <gtest/gtest.h>

#include "protocol/frame_splitter.h"
#include "protocol/messages.h"
#include "mad/path_record.h"

namespace ibat::protocol {
namespace {

using namespace std::chrono_literals;

struct Frame {
  FrameHeader header;
  std::vector<std::uint8_t> payload;
};

Frame only_frame(const std::vector<std::uint8_t>& bytes) {
  FrameSplitter splitter;
  std::vector<Frame> frames;
  auto err = splitter.feed(bytes, [&](const FrameHeader& h, std::span<const std::uint8_t> p) {
    frames.push_back(Frame{h, {p.begin(), p.end()}});
  });
  EXPECT_FALSE(err);
  EXPECT_EQ(frames.size(), 1u);
  return frames.empty() ? Frame{} : frames[0];
}

core::Gid gid(const char* text) { return *core::Gid::parse(text); }

core::PathRecord sample_path() {
  core::PathRecord p;
  p.service_id = 0x0123456789ABCDEFull;
  p.dgid = gid("fe80::2:c903:a:1");
  p.sgid = gid("fe80::2:c903:a:2");
  p.dlid = core::Lid{0x1234};
  p.slid = core::Lid{0x0042};
  p.raw_traffic = true;
  p.flow_label = 0xABCDE;
  p.hop_limit = 0x40;
  p.tclass = 0x11;
  p.reversible = true;
  p.numb_path = 0x7F;
  p.pkey = core::Pkey{0x8001};
  p.qos_class = 0xABC;
  p.sl = 0xD;
  p.mtu_selector = 2;
  p.mtu = 5;
  p.rate_selector = 2;
  p.rate = 16;
  p.pkt_life_selector = 2;
  p.pkt_life = 18;
  p.preference = 3;
  return p;
}

// Every strict prefix and a one-byte extension of a valid payload must be rejected.
template <class Decode>
void expect_every_truncation_rejected(const std::vector<std::uint8_t>& payload, Decode decode,
                                      std::size_t accepted_shorter = SIZE_MAX) {
  for (std::size_t n = 0; n < payload.size(); ++n) {
    if (n == accepted_shorter) continue;
    auto d = decode(std::span(payload.data(), n));
    EXPECT_FALSE(d) << "prefix of " << n << " bytes accepted";
    if (!d) {
      EXPECT_FALSE(d.error().empty());
    }
  }
  auto longer = payload;
  longer.push_back(0);
  EXPECT_FALSE(decode(longer)) << "payload with a trailing byte accepted";
}

core::ResolveRequest round_trip(const core::ResolveRequest& req) {
  std::vector<std::uint8_t> out;
  append_resolve_request(out, 77, req);
  Frame f = only_frame(out);
  EXPECT_EQ(f.header.op, static_cast<std::uint8_t>(Op::resolve));
  EXPECT_EQ(f.header.id, 77u);
  auto d = decode_resolve_request(f.payload);
  EXPECT_TRUE(d) << d.error();
  expect_every_truncation_rejected(f.payload, decode_resolve_request);
  return d ? d.value() : core::ResolveRequest{};
}

void expect_same(const core::ResolveRequest& a, const core::ResolveRequest& b) {
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.sgid, b.sgid);
  EXPECT_EQ(a.pkey, b.pkey);
  EXPECT_EQ(a.timeout, b.timeout);
  EXPECT_EQ(a.cache_only, b.cache_only);
  EXPECT_EQ(a.force_sa, b.force_sa);
}

TEST(Messages, ResolveRoundTripsEveryTargetType) {
  core::ResolveRequest req;
  for (core::Target target : {core::Target{gid("fe80::1")}, core::Target{core::Lid{0xBFFF}},
                              core::Target{*core::IpAddr::parse("10.1.2.3")},
                              core::Target{*core::IpAddr::parse("fd00::1:2")},
                              core::Target{*core::HwAddr::parse(
                                  "80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:00:01")}}) {
    req.target = target;
    expect_same(round_trip(req), req);
  }
}

TEST(Messages, ResolveRoundTripsOptionsAndFlags) {
  core::ResolveRequest req;
  req.target = gid("fe80::9");
  req.sgid = gid("fe80::8");
  req.pkey = core::Pkey{0x7FFF};
  req.timeout = 1500ms;
  req.cache_only = true;
  expect_same(round_trip(req), req);
  req.cache_only = false;
  req.force_sa = true;
  req.pkey = core::Pkey{0};  // present but zero: carried, the daemon answers `invalid`
  expect_same(round_trip(req), req);
}

TEST(Messages, ResolveTimeoutRoundsUpSoItNeverMeansDefault) {
  core::ResolveRequest req;
  req.target = core::Lid{1};
  req.timeout = 100us;
  EXPECT_EQ(round_trip(req).timeout, core::Duration(1ms));
  req.timeout = std::chrono::hours(24 * 60);
  EXPECT_EQ(round_trip(req).timeout, core::Duration(std::chrono::milliseconds(0xFFFFFFFFu)));
}

TEST(Messages, ResolveRequestByteLayout) {
  core::ResolveRequest req;
  req.target = core::Lid{0x0102};
  req.pkey = core::Pkey{0xFFFF};
  req.timeout = 0x0A0B0C0Dms;
  req.force_sa = true;
  std::vector<std::uint8_t> out;
  append_resolve_request(out, 1, req);
  Frame f = only_frame(out);
  ASSERT_EQ(f.payload.size(), 26u);
  EXPECT_EQ(f.payload[0], 2);     // LID
  EXPECT_EQ(f.payload[1], 0x0A);  // force-SA | pkey present
  EXPECT_EQ(f.payload[2], 0xFF);
  EXPECT_EQ(f.payload[3], 0xFF);
  EXPECT_EQ(f.payload[4], 0x0A);
  EXPECT_EQ(f.payload[7], 0x0D);
  for (std::size_t i = 8; i < 24; ++i) EXPECT_EQ(f.payload[i], 0) << i;
  EXPECT_EQ(f.payload[24], 1);
  EXPECT_EQ(f.payload[25], 2);
}

TEST(Messages, ResolveRejectsBadTypeAndReservedFlags) {
  core::ResolveRequest req;
  req.target = core::Lid{5};
  std::vector<std::uint8_t> out;
  append_resolve_request(out, 1, req);
  auto payload = only_frame(out).payload;
  for (std::uint8_t type : {std::uint8_t{0}, std::uint8_t{6}, std::uint8_t{255}}) {
    auto bad = payload;
    bad[0] = type;
    auto d = decode_resolve_request(bad);
    ASSERT_FALSE(d);
    EXPECT_NE(d.error().find("target type"), std::string::npos) << d.error();
  }
  auto bad = payload;
  bad[1] = 0x8A;
  auto reserved = decode_resolve_request(bad);
  ASSERT_FALSE(reserved);
  EXPECT_NE(reserved.error().find("flags 0x8a has reserved bits set"), std::string::npos) << reserved.error();
  // A QoS flag without its trailer is a length mismatch.
  bad = payload;
  bad[1] = kResolveServiceId;
  EXPECT_FALSE(decode_resolve_request(bad));
  // A GID type with a LID-sized target is a length mismatch.
  bad = payload;
  bad[0] = 1;
  EXPECT_FALSE(decode_resolve_request(bad));
}

TEST(Messages, ResolveReplyRoundTripsEveryState) {
  for (auto state : {core::EntryState::valid, core::EntryState::stale, core::EntryState::provisional}) {
    core::ResolveResult result{core::Error::ok, sample_path(), state, 1234ms};
    std::vector<std::uint8_t> out;
    append_resolve_reply(out, 5, result);
    Frame f = only_frame(out);
    EXPECT_EQ(f.header.op, 0x81);
    EXPECT_EQ(f.header.status, Status::ok);
    ASSERT_EQ(f.payload.size(), kPathReplySize);
    auto wire_path = mad::encode_path_record(result.path);
    EXPECT_TRUE(std::equal(wire_path.begin(), wire_path.end(), f.payload.begin()));
    EXPECT_EQ(f.payload[64], static_cast<std::uint8_t>(state == core::EntryState::valid ? 1
                                                       : state == core::EntryState::stale ? 2 : 3));
    EXPECT_EQ(f.payload[71], 1234 & 0xFF);
    auto d = decode_resolve_reply(f.header.status, f.payload);
    ASSERT_TRUE(d) << d.error();
    EXPECT_EQ(d.value().path, result.path);
    EXPECT_EQ(d.value().state, state);
    EXPECT_EQ(d.value().age, result.age);
    expect_every_truncation_rejected(f.payload, [&](auto p) { return decode_resolve_reply(Status::ok, p); });
  }
}

// The origin and the cache key's QoS fields ride in bytes 65 and 66, reserved (zero) before: an
// older daemon's reply reads as unknown / the default key, an origin a newer daemon may add as
// unknown, and neither is malformed.
TEST(Messages, ResolveReplyCarriesTheOriginAndKeyInFormerlyReservedBytes) {
  for (auto origin : {core::PathOrigin::unknown, core::PathOrigin::sa_table, core::PathOrigin::sa_get,
                      core::PathOrigin::warm_cache, core::PathOrigin::neighbour}) {
    core::ResolveResult result{core::Error::ok, sample_path(), core::EntryState::valid, 5ms};
    result.origin = origin;
    result.key_qos_fields = core::QosKey::kQosClass;
    std::vector<std::uint8_t> out;
    append_resolve_reply(out, 3, result);
    Frame f = only_frame(out);
    ASSERT_EQ(f.payload.size(), kPathReplySize);
    EXPECT_EQ(f.payload[65], static_cast<std::uint8_t>(origin));
    EXPECT_EQ(f.payload[66], core::QosKey::kQosClass);
    EXPECT_EQ(f.payload[67], 0);
    auto d = decode_resolve_reply(f.header.status, f.payload);
    ASSERT_TRUE(d) << d.error();
    EXPECT_EQ(d.value().origin, origin);
    EXPECT_EQ(d.value().key_qos_fields, core::QosKey::kQosClass);
  }
  core::ResolveResult result{core::Error::ok, sample_path(), core::EntryState::valid, 5ms};
  std::vector<std::uint8_t> out;
  append_resolve_reply(out, 3, result);
  Frame f = only_frame(out);
  f.payload[65] = 0;  // an older daemon
  f.payload[66] = 0;
  auto old = decode_resolve_reply(f.header.status, f.payload);
  ASSERT_TRUE(old) << old.error();
  EXPECT_EQ(old.value().origin, core::PathOrigin::unknown);
  EXPECT_EQ(old.value().key_qos_fields, 0);
  f.payload[65] = 200;  // a newer daemon's origin
  auto newer = decode_resolve_reply(f.header.status, f.payload);
  ASSERT_TRUE(newer) << newer.error();
  EXPECT_EQ(newer.value().origin, core::PathOrigin::unknown);
}

TEST(Messages, ResolveErrorReplyIsEmptyAndCarriesTheError) {
  for (auto e : {core::Error::timeout, core::Error::unreachable, core::Error::no_record,
                 core::Error::overloaded, core::Error::cancelled, core::Error::invalid}) {
    std::vector<std::uint8_t> out;
    append_resolve_reply(out, 8, core::ResolveResult{e, {}, core::EntryState::valid, {}});
    Frame f = only_frame(out);
    EXPECT_TRUE(f.payload.empty());
    auto d = decode_resolve_reply(f.header.status, f.payload);
    ASSERT_TRUE(d) << d.error();
    EXPECT_EQ(d.value().error, e);
    EXPECT_FALSE(decode_resolve_reply(f.header.status, std::vector<std::uint8_t>{0}));
  }
  EXPECT_FALSE(decode_resolve_reply(Status::denied, {}));
  EXPECT_FALSE(decode_resolve_reply(Status::malformed, {}));
}

TEST(Messages, ResolveReplyRejectsUnknownStateAndUnservablePath) {
  std::vector<std::uint8_t> out;
  append_resolve_reply(out, 1, core::ResolveResult{core::Error::ok, sample_path(), core::EntryState::valid, 0ms});
  auto payload = only_frame(out).payload;
  for (std::uint8_t state : {std::uint8_t{0}, std::uint8_t{4}, std::uint8_t{255}}) {
    auto bad = payload;
    bad[64] = state;
    EXPECT_FALSE(decode_resolve_reply(Status::ok, bad));
  }
  auto dlid0 = payload;
  dlid0[40] = dlid0[41] = 0;
  auto d = decode_resolve_reply(Status::ok, dlid0);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().find("DLID 0"), std::string::npos) << d.error();
}

TEST(Messages, NeighAddRoundTripsBothFamiliesAndOptionalSlid) {
  auto hw = *core::HwAddr::parse("00:00:04:04:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:00:01");
  for (auto n : {NeighAdd{*core::IpAddr::parse("192.168.7.9"), hw, core::Lid{12}},
                 NeighAdd{*core::IpAddr::parse("fd00::7"), hw, std::nullopt}}) {
    std::vector<std::uint8_t> out;
    append_neigh_add(out, 3, n);
    Frame f = only_frame(out);
    EXPECT_EQ(f.header.op, 2);
    auto d = decode_neigh_add(f.payload);
    ASSERT_TRUE(d) << d.error();
    EXPECT_EQ(d.value(), n);
    expect_every_truncation_rejected(f.payload, decode_neigh_add);
    auto bad = f.payload;
    bad[0] = 5;
    auto e = decode_neigh_add(bad);
    ASSERT_FALSE(e);
    EXPECT_NE(e.error().find("family 5"), std::string::npos) << e.error();
  }
}

TEST(Messages, NeighDelRoundTrips) {
  NeighDel n{*core::IpAddr::parse("10.0.0.1")};
  std::vector<std::uint8_t> out;
  append_neigh_del(out, 4, n);
  Frame f = only_frame(out);
  EXPECT_EQ(f.header.op, 3);
  auto d = decode_neigh_del(f.payload);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d.value(), n);
  expect_every_truncation_rejected(f.payload, decode_neigh_del);
}

TEST(Messages, TableHitsRoundTripAndCountMustMatch) {
  TableHits hits{0x0102030405060708ULL, 5'000'000'000ULL, {0, 7, 0xFFFFFFFF}};
  std::vector<std::uint8_t> out;
  append_table_hits(out, 9, hits);
  Frame f = only_frame(out);
  EXPECT_EQ(f.header.op, 10);
  EXPECT_EQ(f.payload.size(), 32u);
  auto d = decode_table_hits(f.payload);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d.value(), hits);
  f.payload[19] = 2;  // count 2, 3 slots carried
  EXPECT_FALSE(decode_table_hits(f.payload));
  f.payload.resize(18);
  EXPECT_FALSE(decode_table_hits(f.payload));
}

TEST(Messages, FlushRoundTripsAllOneDestinationAndOnePkey) {
  for (auto req : {FlushRequest{}, FlushRequest{gid("fe80::5"), std::nullopt, std::nullopt},
                   FlushRequest{gid("fe80::5"), core::Pkey{0x8001}, std::nullopt}}) {
    std::vector<std::uint8_t> out;
    append_flush(out, 6, req);
    Frame f = only_frame(out);
    EXPECT_EQ(f.header.op, 7);
    auto d = decode_flush(f.payload);
    ASSERT_TRUE(d) << d.error();
    EXPECT_EQ(d.value(), req);
    if (req.dgid) expect_every_truncation_rejected(f.payload, decode_flush, 0);
  }
}

TEST(Messages, FlushOfOnePortRoundTripsAndRejectsWhatMeansNothing) {
  for (auto req : {FlushRequest{std::nullopt, std::nullopt, gid("fe80::9")},
                   FlushRequest{gid("fe80::5"), core::Pkey{0x8001}, gid("fe80::9")}}) {
    std::vector<std::uint8_t> out;
    append_flush(out, 6, req);
    Frame f = only_frame(out);
    ASSERT_EQ(f.payload.size(), 34u);
    auto d = decode_flush(f.payload);
    ASSERT_TRUE(d) << d.error();
    EXPECT_EQ(d.value(), req);
    for (std::size_t n = 1; n < 34; ++n) {
      if (n == 18) continue;  // the 18-byte form is a FLUSH of its own
      EXPECT_FALSE(decode_flush(std::span(f.payload).first(n))) << n;
    }
  }
  std::vector<std::uint8_t> zero_sgid(34, 0);
  EXPECT_EQ(decode_flush(zero_sgid).error(), "FLUSH: a source GID of zero");
  std::vector<std::uint8_t> pkey_alone(34, 0);
  pkey_alone[16] = 0x80;
  pkey_alone[17] = 0x01;
  pkey_alone[33] = 9;
  EXPECT_EQ(decode_flush(pkey_alone).error(), "FLUSH: a P_Key without a destination GID");
}

TEST(Messages, CancelRoundTrips) {
  std::vector<std::uint8_t> out;
  append_cancel(out, 10, CancelRequest{0xDEADBEEF});
  Frame f = only_frame(out);
  EXPECT_EQ(f.header.op, 9);
  auto d = decode_cancel(f.payload);
  ASSERT_TRUE(d);
  EXPECT_EQ(d.value().target_id, 0xDEADBEEFu);
  expect_every_truncation_rejected(f.payload, decode_cancel);
}

TEST(Messages, PathsRequestRoundTripsAndEmptyMeansTheFirstPage) {
  std::vector<std::uint8_t> out;
  append_paths_request(out, 3, PathsRequest{0x01020304, 50});
  Frame f = only_frame(out);
  EXPECT_EQ(f.header.op, 5);
  auto d = decode_paths_request(f.payload);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d.value(), (PathsRequest{0x01020304, 50}));
  expect_every_truncation_rejected(f.payload, decode_paths_request, 0);
  auto first = decode_paths_request({});
  ASSERT_TRUE(first);
  EXPECT_EQ(first.value(), PathsRequest{});
}

TEST(Messages, PathsReplyIsChunkedAndCarriesTheNextCursor) {
  PathsPage page{77, "[" + std::string(100'000, ' ') + "]"};
  std::vector<std::uint8_t> out;
  append_paths_reply(out, 9, page);
  FrameSplitter splitter;
  std::vector<std::uint8_t> body;
  int frames = 0;
  ASSERT_FALSE(splitter.feed(out, [&](const FrameHeader& h, std::span<const std::uint8_t> p) {
    EXPECT_EQ(h.op, reply_op(Op::paths));
    EXPECT_EQ(h.more(), ++frames == 1);
    body.insert(body.end(), p.begin(), p.end());
  }));
  EXPECT_EQ(frames, 2);
  auto d = decode_paths_reply(body);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d.value(), page);
  EXPECT_FALSE(decode_paths_reply(std::vector<std::uint8_t>{0, 0, 0}));
}

TEST(Messages, EmptyRequestsMustBeEmpty) {
  for (Op op : {Op::neigh_list, Op::stats, Op::watch}) {
    std::vector<std::uint8_t> out;
    append_empty_request(out, 1, op);
    Frame f = only_frame(out);
    EXPECT_EQ(f.header.op, static_cast<std::uint8_t>(op));
    EXPECT_TRUE(decode_empty(op, f.payload));
    auto d = decode_empty(op, std::vector<std::uint8_t>{1});
    ASSERT_FALSE(d);
    EXPECT_NE(d.error().find(to_string(op)), std::string::npos) << d.error();
  }
}

TEST(Messages, EmptyReplyCarriesStatus) {
  std::vector<std::uint8_t> out;
  append_empty_reply(out, 12, Op::neigh_add, Status::denied);
  Frame f = only_frame(out);
  EXPECT_EQ(f.header.op, 0x82);
  EXPECT_EQ(f.header.status, Status::denied);
  EXPECT_EQ(f.header.id, 12u);
  EXPECT_TRUE(f.payload.empty());
}

TEST(Messages, ResolveCarriesServiceIdQosClassAndTclassInItsTrailer) {
  core::ResolveRequest req;
  req.target = core::Gid::from_parts(0xFE80ULL << 48, 2);
  req.service_id = 0x0000000001060CBCULL;
  req.qos_class = 0xABC;
  std::vector<std::uint8_t> out;
  append_resolve_request(out, 1, req);
  auto payload = only_frame(out).payload;
  ASSERT_EQ(payload.size(), kResolveFixedSize + 16 + kResolveQosTrailerSize);
  EXPECT_EQ(payload[1] & kResolveQosFields, kResolveServiceId | kResolveQosClass);
  auto back = decode_resolve_request(payload);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back.value().service_id, req.service_id);
  EXPECT_EQ(back.value().qos_class, req.qos_class);
  EXPECT_FALSE(back.value().tclass);  // not sent: stays absent although the trailer has its byte

  req.service_id.reset();
  req.qos_class.reset();
  req.tclass = 0;
  out.clear();
  append_resolve_request(out, 2, req);
  back = decode_resolve_request(only_frame(out).payload);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back.value().tclass, std::optional<std::uint8_t>{0});
  EXPECT_FALSE(back.value().service_id);

  auto bad = only_frame(out).payload;
  bad[bad.size() - 1] = 1;  // the reserved byte
  auto d = decode_resolve_request(bad);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().find("reserved"), std::string::npos) << d.error();
  bad = only_frame(out).payload;
  bad[bad.size() - 4] = 0x10;  // qos_class 0x1000: 13 bits
  d = decode_resolve_request(bad);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().find("not 12 bits"), std::string::npos) << d.error();
}

}  // namespace
}  // namespace ibat::protocol
