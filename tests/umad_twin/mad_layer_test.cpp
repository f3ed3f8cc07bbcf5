// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The twin's umad file semantics, with a wire that records what would go to ibsim: agents, the TID
// rewrite and the routing of answers, ENOSPC for a short buffer, RMPP only for RMPP agents,
// request dispatch by method, and the kernel's send timeout and retries. And RMPP between two CAs
// (a requester on CA 0, an SA on CA 1) over a wire that loses, repeats or holds datagrams: the
// window, the resend from the last ACK, the retries, ABORT, and ACKs never read by a program.
#include "mad_layer.h"
#include "umad_message.h"

#include <arpa/inet.h>
#include <endian.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <rdma/ib_user_mad.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <utility>

namespace ibat::umad_twin {
namespace {

using namespace std::chrono_literals;
using Clock = MadLayer::Clock;

struct Sent {
  unsigned ca;
  SimRequest request;
  bool may_block;
};

class MadLayerTest : public ::testing::Test {
 protected:
  MadLayer layer{[this](unsigned ca, const SimRequest& r, bool block) {
    if (!block && wire_busy) return WireStatus::busy;
    sent.push_back({ca, r, block});
    return WireStatus::sent;
  }};
  std::vector<Sent> sent;
  bool wire_busy = false;  // ibsim's queue full: non-blocking sends must wait
  Clock::time_point t0 = Clock::now();

  void TearDown() override {
    for (int fd : opened) layer.close_file(fd);
  }
  int open(unsigned ca = 0) {
    const int fd = layer.open_file(ca, true, true);
    EXPECT_GE(fd, 0);
    opened.push_back(fd);
    return fd;
  }
  int agent(int fd, std::uint8_t cls, std::uint8_t rmpp = 0, std::initializer_list<int> methods = {}) {
    AgentSpec s;
    s.mgmt_class = cls;
    s.class_version = cls == 0x03 ? 2 : 1;
    s.rmpp_version = rmpp;
    s.qpn = cls == 0x81 || cls == 0x01 ? 0 : 1;
    for (int m : methods) s.methods.set(m);
    return layer.register_agent(fd, s);
  }
  static Bytes sa_mad(std::uint8_t method, std::uint64_t tid_value, std::size_t length = 256) {
    Bytes m(length, 0);
    m[0] = 1;
    m[1] = 0x03;
    m[2] = 2;
    m[3] = method;
    set_tid(m, tid_value);
    return m;
  }
  ssize_t write(int fd, const Bytes& u, Clock::time_point at) { return layer.write(fd, u.data(), u.size(), at); }
  // What ibsim hands back: the MAD from LID `slid` (an answer or a request of another node).
  static SimRequest from_wire(std::span<const std::uint8_t> mad, std::uint16_t slid = 7) {
    SimRequest r{};
    r.slid = htons(slid);
    r.sqp = htonl(1);
    r.length = htobe64(256);
    std::memcpy(r.mad, mad.data(), 256);
    return r;
  }
  static std::span<const std::uint8_t> mad_of(const SimRequest& r) { return {r.mad, 256}; }
  Bytes read(int fd, std::size_t room = 64 + 256) {
    Bytes buf(room);
    const ssize_t n = layer.read(fd, buf.data(), buf.size());
    if (n < 0) {
      last_errno = static_cast<int>(-n);
      return {};
    }
    buf.resize(static_cast<std::size_t>(n));
    return buf;
  }
  static ib_user_mad_hdr header(const Bytes& u) {
    ib_user_mad_hdr h;
    std::memcpy(&h, u.data(), sizeof h);
    return h;
  }
  // What ibsim would do with every datagram sent since the last call: carry it to the other CA
  // (0 <-> 1) from the sender's LID (CA 0: 7, CA 1: 3), `copies(datagram)` times (0: lost), until
  // nothing more is sent.
  void pump(Clock::time_point at, const std::function<int(const SimRequest&)>& copies = {}) {
    while (carried < sent.size()) {
      const Sent s = sent[carried++];
      SimRequest r = s.request;
      r.slid = htons(s.ca == 0 ? 7 : 3);
      const int n = copies ? copies(r) : 1;
      for (int i = 0; i < n; ++i) layer.on_packet(1 - s.ca, r, at);
    }
  }
  void skip() { carried = sent.size(); }  // what was sent so far never arrives
  static std::uint32_t data_segment(const SimRequest& r) {  // 0: not an RMPP DATA segment
    const auto m = mad_of(r);
    return rmpp_active(m) && rmpp_type(m) == kRmppTypeData ? segment_number(m) : 0;
  }
  static bool is_ack(const SimRequest& r) { return rmpp_active(mad_of(r)) && rmpp_type(mad_of(r)) == kRmppTypeAck; }
  std::vector<std::uint32_t> segments_sent_by(unsigned ca, std::size_t from = 0) const {
    std::vector<std::uint32_t> numbers;
    for (std::size_t i = from; i < sent.size(); ++i) {
      if (sent[i].ca == ca && data_segment(sent[i].request) != 0) numbers.push_back(data_segment(sent[i].request));
    }
    return numbers;
  }

  // A requester on CA 0 has asked the SA on CA 1 (an RMPP agent serving GetTable) for a table of
  // `records` 64-byte records, and the SA has read the request; `table` is its answer, not written.
  struct Exchange {
    int requester = -1, sa = -1, ask = -1, serve = -1;
    Bytes table;
  };
  Exchange ask_for_table(std::size_t records, std::uint32_t timeout_ms = 5000) {
    Exchange x;
    x.requester = open(0);
    x.sa = open(1);
    x.ask = agent(x.requester, 0x03, 1);
    x.serve = agent(x.sa, 0x03, 1, {0x12});
    write(x.requester, umad(x.ask, sa_mad(0x12, 0x42), timeout_ms), t0);
    pump(t0);
    const Bytes request = read(x.sa);
    EXPECT_EQ(request.size(), 64u + 256);
    EXPECT_EQ(header(request).id, static_cast<std::uint32_t>(x.serve));
    x.table = sa_mad(0x92, tid(std::span(request).subspan(64)), 56 + records * 64);
    x.table[26] = 0x01;  // RMPP ACTIVE, version left 0 as OpenSM does
    for (std::size_t i = 56; i < x.table.size(); ++i) x.table[i] = static_cast<std::uint8_t>(i * 7);
    return x;
  }
  // OpenSM answers with timeout 0 and its transaction retries (3).
  void answer(const Exchange& x, std::uint32_t retries = 3) {
    ASSERT_EQ(write(x.sa, umad(x.serve, x.table, 0, retries), t0), static_cast<ssize_t>(64 + x.table.size()));
  }
  void expect_table_once(const Exchange& x) {
    const Bytes whole = read(x.requester, 64 + x.table.size());
    ASSERT_EQ(whole.size(), 64u + x.table.size());
    EXPECT_EQ(header(whole).status, 0u);
    EXPECT_TRUE(std::equal(whole.begin() + 64 + 56, whole.end(), x.table.begin() + 56));
    EXPECT_TRUE(read(x.requester).empty()) << "one answer, read once";
    EXPECT_EQ(last_errno, EAGAIN);
    EXPECT_TRUE(read(x.sa).empty()) << "ACKs and ABORTs are the twin's own: the SA reads none";
  }

  std::size_t carried = 0;
  std::vector<int> opened;
  int last_errno = 0;
};

TEST_F(MadLayerTest, ARequestGoesOutAsOneMadAndItsAnswerComesBackToTheAgent) {
  const int fd = open();
  agent(fd, 0x81);  // agent 0: another class
  const int sa = agent(fd, 0x03);
  ASSERT_EQ(sa, 1);
  ASSERT_EQ(write(fd, umad(sa, sa_mad(0x01, 0xffff'ffff'0000'0042), 100), t0), 64 + 256);
  ASSERT_EQ(sent.size(), 1u);
  const auto out = mad_of(sent[0].request);
  EXPECT_EQ(tid(out) & 0xffffffff, 0x42u) << "the low 32 bits are the caller's";
  EXPECT_NE(tid(out) >> 32 & 0xffff, 0xffffu) << "bits 32-47 route the answer to this agent";
  EXPECT_EQ(ntohs(static_cast<std::uint16_t>(sent[0].request.dlid)), 1);
  EXPECT_TRUE(sent[0].may_block);

  Bytes answer(out.begin(), out.end());
  answer[3] = 0x81;  // GetResp
  set_tid(answer, (tid(out) & ((1ull << 48) - 1)) | 3ull << 48);  // ibsim's client id in the top 16 bits
  layer.on_packet(0, from_wire(answer), t0 + 1ms);
  const Bytes got = read(fd);
  ASSERT_EQ(got.size(), 64u + 256);
  EXPECT_EQ(header(got).id, 1u);
  EXPECT_EQ(header(got).status, 0u);
  EXPECT_EQ(header(got).length, 64u + 256);
  EXPECT_EQ(ntohs(header(got).lid), 7);
  EXPECT_EQ(got[64 + 3], 0x81);
  EXPECT_TRUE(read(fd).empty());
  EXPECT_EQ(last_errno, EAGAIN) << "one answer, read once";
}

TEST_F(MadLayerTest, AnAnswerNobodyWaitsForIsDroppedAsTheKernelDropsIt) {
  const int fd = open();
  const int sa = agent(fd, 0x03);
  write(fd, umad(sa, sa_mad(0x01, 0x42)), t0);  // timeout 0: the kernel keeps no send waiting
  Bytes answer(mad_of(sent[0].request).begin(), mad_of(sent[0].request).end());
  answer[3] = 0x81;
  layer.on_packet(0, from_wire(answer), t0 + 1ms);
  EXPECT_TRUE(read(fd).empty());
  EXPECT_EQ(layer.counters().unmatched_responses, 1u);
}

TEST_F(MadLayerTest, NoAnswerMeansRetriesThenETIMEDOUTWithTheRequest) {
  const int fd = open();
  const int sa = agent(fd, 0x03);
  write(fd, umad(sa, sa_mad(0x01, 0x42), 100, 2), t0);
  EXPECT_EQ(layer.on_timer(t0 + 50ms), t0 + 100ms);
  EXPECT_EQ(sent.size(), 1u);
  layer.on_timer(t0 + 100ms);
  ASSERT_EQ(sent.size(), 2u) << "first retry";
  EXPECT_FALSE(sent[1].may_block) << "the timer thread never waits on ibsim";
  EXPECT_EQ(std::memcmp(sent[0].request.mad, sent[1].request.mad, 256), 0) << "same MAD, same TID";
  layer.on_timer(t0 + 200ms);
  EXPECT_EQ(sent.size(), 3u);
  EXPECT_TRUE(read(fd).empty());
  EXPECT_EQ(layer.on_timer(t0 + 300ms), std::nullopt);
  const Bytes timed_out = read(fd);
  ASSERT_EQ(timed_out.size(), 64u + 256);
  EXPECT_EQ(header(timed_out).status, 110u);
  EXPECT_EQ(tid(std::span(timed_out).subspan(64)) & 0xffffffff, 0x42u);
  EXPECT_EQ(layer.counters().retries, 2u);
  EXPECT_EQ(layer.counters().timeouts, 1u);
}

TEST_F(MadLayerTest, AnAnswerToAnyAttemptEndsTheWait) {
  const int fd = open();
  const int sa = agent(fd, 0x03);
  write(fd, umad(sa, sa_mad(0x01, 0x42), 100, 3), t0);
  layer.on_timer(t0 + 100ms);
  Bytes answer(mad_of(sent[0].request).begin(), mad_of(sent[0].request).end());
  answer[3] = 0x81;
  layer.on_packet(0, from_wire(answer), t0 + 150ms);
  EXPECT_EQ(read(fd).size(), 64u + 256);
  EXPECT_EQ(layer.on_timer(t0 + 1s), std::nullopt);
  layer.on_packet(0, from_wire(answer), t0 + 1s);
  EXPECT_TRUE(read(fd).empty()) << "a second copy finds nobody waiting";
}

TEST_F(MadLayerTest, AMadThatIbsimCouldNotDeliverIsLeftToTheTimer) {
  const int fd = open();
  const int sa = agent(fd, 0x03);
  write(fd, umad(sa, sa_mad(0x01, 0x42), 100), t0);
  SimRequest bounced = sent[0].request;
  bounced.status = htonl(110);
  layer.on_packet(0, bounced, t0 + 1ms);
  EXPECT_TRUE(read(fd).empty());
  EXPECT_EQ(layer.counters().bounced, 1u);
  layer.on_timer(t0 + 100ms);
  EXPECT_EQ(header(read(fd)).status, 110u);
}

TEST_F(MadLayerTest, AnRmppAgentsLongAnswerCrossesInSegmentsAndReadsAsOneMessage) {
  const auto x = ask_for_table(30, 100);
  const std::size_t before = sent.size();
  answer(x);
  EXPECT_EQ(segments_sent_by(1, before), std::vector<std::uint32_t>{1}) << "the sender's first window is one segment";
  pump(t0 + 1ms);
  EXPECT_EQ(segments_sent_by(1, before).size(), (30u * 64 + 199) / 200);

  const Bytes small = read(x.requester);
  EXPECT_TRUE(small.empty());
  EXPECT_EQ(last_errno, ENOSPC);
  Bytes header_only(64);
  EXPECT_EQ(layer.read(x.requester, header_only.data(), 64 + 256), -ENOSPC);
  EXPECT_EQ(header(header_only).length, 64u + x.table.size()) << "the length libibumad grows its buffer to";
  expect_table_once(x);
  const Counters c = layer.counters();
  EXPECT_EQ(c.reassembled, 1u);
  EXPECT_EQ(c.acks_sent, 2u) << "segment 1, opening the window, and the last";
  EXPECT_EQ(c.acks_received, 2u);
}

TEST_F(MadLayerTest, WithoutRmppALongMadIsRefusedAndSegmentsArriveRaw) {
  const int a = open(0);
  const int b = open(1);
  const int plain = agent(a, 0x03, 0);
  const int serve = agent(b, 0x03, 1, {0x12});
  Bytes table = sa_mad(0x92, 0x42, 56 + 500);
  table[26] = 0x01;
  EXPECT_EQ(write(a, umad(plain, table), t0), -EINVAL);
  write(a, umad(plain, sa_mad(0x12, 0x42), 100), t0);
  table = sa_mad(0x92, tid(mad_of(sent[0].request)), 56 + 500);
  table[26] = 0x01;
  const std::size_t before = sent.size();
  write(b, umad(serve, table), t0);
  ASSERT_EQ(sent.size() - before, 1u) << "segment 1 of 3: the rest waits for an ACK";
  layer.on_packet(0, from_wire(mad_of(sent[before].request)), t0);
  EXPECT_EQ(read(a).size(), 64u + 256) << "the first segment, as it came";
  EXPECT_EQ(layer.counters().acks_sent, 0u) << "only an RMPP agent's kernel ACKs";
}

TEST_F(MadLayerTest, ALostSegmentIsResentFromTheLastAckAndTheAnswerArrivesWholeOnce) {
  const auto x = ask_for_table(30);  // 10 segments
  answer(x);
  bool lost = false;
  pump(t0, [&](const SimRequest& r) { return data_segment(r) == 5 && !std::exchange(lost, true) ? 0 : 1; });
  EXPECT_TRUE(read(x.requester).empty());
  EXPECT_EQ(layer.on_timer(t0 + 1999ms), t0 + 2000ms) << "the SA waits 2 s for the ACK of its window";
  const std::size_t before = sent.size();
  layer.on_timer(t0 + 2s);
  EXPECT_EQ(segments_sent_by(1, before), (std::vector<std::uint32_t>{2, 3, 4, 5, 6, 7, 8, 9, 10}))
      << "from the segment after the last ACKed (1), up to the window";
  pump(t0 + 2s);
  expect_table_once(x);
  const Counters c = layer.counters();
  EXPECT_EQ(c.segments_resent, 9u);
  EXPECT_EQ(c.retries, 1u);
  EXPECT_EQ(c.reassembled, 1u);
  const std::size_t done = sent.size();
  layer.on_timer(t0 + 20s);
  EXPECT_EQ(sent.size(), done) << "the last ACK completed the SA's send";
  EXPECT_EQ(layer.counters().timeouts, 0u);
}

TEST_F(MadLayerTest, AnInjectedLossDropsTheNamedSegmentOnceAndTheResendCompletesTheAnswer) {
  const auto x = ask_for_table(30);  // 10 segments, answered to CA 0
  layer.lose_next_segment(0, 5);
  answer(x);
  pump(t0);
  EXPECT_TRUE(read(x.requester).empty()) << "segment 5 never came: no message yet";
  EXPECT_EQ(layer.counters().injected_losses, 1u);
  layer.on_timer(t0 + 2s);  // the SA's ACK wait ends: it resends from the last ACKed segment
  pump(t0 + 2s);
  expect_table_once(x);
  EXPECT_EQ(layer.counters().injected_losses, 1u) << "lost once: the resent segment 5 arrives";
  EXPECT_EQ(layer.counters().reassembled, 1u);
}

TEST_F(MadLayerTest, TheWindowBoundsTheSegmentsInFlight) {
  const auto x = ask_for_table(320);  // 103 segments
  answer(x);
  // Segment 65, the window's last, is lost: the requester never reaches the window's end to ACK it.
  bool lost = false;
  pump(t0, [&](const SimRequest& r) { return data_segment(r) == 65 && !std::exchange(lost, true) ? 0 : 1; });
  const auto first_round = segments_sent_by(1);
  ASSERT_EQ(first_round.size(), 65u) << "segment 1, then the window the first ACK opened";
  EXPECT_EQ(*std::max_element(first_round.begin(), first_round.end()), 65u) << "kernel window: 64 after the first";
  layer.on_timer(t0 + 2s);
  pump(t0 + 2s);
  expect_table_once(x);
  EXPECT_EQ(layer.counters().acks_sent, 3u) << "at 1, at 65 (the window's end) and at 103; repeats not ACKed";
  EXPECT_EQ(layer.counters().segments_resent, 64u) << "2..65";
}

TEST_F(MadLayerTest, ALostAckIsRecoveredByTheResend) {
  const auto x = ask_for_table(30);
  answer(x);
  int acks = 0;
  pump(t0, [&](const SimRequest& r) { return is_ack(r) && ++acks == 1 ? 0 : 1; });  // the ACK of segment 1
  EXPECT_EQ(segments_sent_by(1).size(), 1u) << "no ACK, no more segments";
  layer.on_timer(t0 + 2s);  // segment 1 again: the requester ACKs it again
  bool final_lost = false;
  pump(t0 + 2s, [&](const SimRequest& r) {
    return is_ack(r) && segment_number(mad_of(r)) == 10 && !std::exchange(final_lost, true) ? 0 : 1;
  });
  ASSERT_TRUE(final_lost);
  layer.on_timer(t0 + 4s);  // the SA has only segment 1 acknowledged: 2..10 again, each re-ACKed
  pump(t0 + 4s);
  expect_table_once(x);
  const std::size_t done = sent.size();
  layer.on_timer(t0 + 30s);
  EXPECT_EQ(sent.size(), done) << "the re-ACK completed the SA's send";
  EXPECT_EQ(layer.counters().timeouts, 0u);
}

TEST_F(MadLayerTest, AReceiverThatNeverAcksMakesTheSendFailAfterItsRetries) {
  const auto x = ask_for_table(30, 60000);
  answer(x, 2);
  pump(t0, [](const SimRequest&) { return 0; });
  EXPECT_EQ(layer.on_timer(t0 + 2s), t0 + 4s);
  EXPECT_EQ(layer.on_timer(t0 + 4s), t0 + 6s);
  EXPECT_TRUE(read(x.sa).empty());
  layer.on_timer(t0 + 6s);
  EXPECT_EQ(segments_sent_by(1), (std::vector<std::uint32_t>{1, 1, 1})) << "the send and its 2 retries";
  EXPECT_FALSE(sent.back().may_block) << "resent from the timer thread";
  const Bytes timed_out = read(x.sa);
  ASSERT_EQ(timed_out.size(), 64u + 256) << "the answer's first MAD";
  EXPECT_EQ(header(timed_out).status, 110u) << "ETIMEDOUT, as ib_umad reports a send that timed out";
  EXPECT_EQ(tid(std::span(timed_out).subspan(64)), tid(x.table));
  EXPECT_EQ(layer.counters().timeouts, 1u);
  EXPECT_EQ(layer.counters().retries, 2u);
}

TEST_F(MadLayerTest, ARepeatedSegmentIsNotDeliveredTwice) {
  const auto x = ask_for_table(30);
  answer(x);
  pump(t0, [](const SimRequest&) { return 2; });  // every datagram arrives twice
  expect_table_once(x);
  EXPECT_EQ(layer.counters().reassembled, 1u);
  EXPECT_GT(layer.counters().acks_sent, 2u) << "repeats of a joined message are ACKed again";
}

TEST_F(MadLayerTest, ARequesterWaitingLessThanTheAckTimerGetsETIMEDOUTFirst) {
  const auto x = ask_for_table(30, 1000);  // saquery's default timeout
  answer(x);
  bool lost = false;
  pump(t0, [&](const SimRequest& r) { return data_segment(r) == 5 && !std::exchange(lost, true) ? 0 : 1; });
  layer.on_timer(t0 + 1s);
  EXPECT_EQ(header(read(x.requester)).status, 110u);
  layer.on_timer(t0 + 2s);  // the SA's resend comes after the requester gave up
  pump(t0 + 2s);
  EXPECT_TRUE(read(x.requester).empty());
  EXPECT_EQ(layer.counters().reassembled, 1u);
  EXPECT_EQ(layer.counters().unmatched_responses, 1u);
}

TEST_F(MadLayerTest, AMalformedSegmentIsAbortedAndTheAbortEndsTheSend) {
  const auto x = ask_for_table(30);
  answer(x);
  SimRequest bad = sent.back().request;
  skip();
  bad.mad[31] = 2;  // FIRST on segment 2
  bad.slid = htons(3);
  layer.on_packet(0, bad, t0);
  ASSERT_EQ(sent.back().ca, 0u);
  const auto abort = mad_of(sent.back().request);
  EXPECT_EQ(rmpp_type(abort), kRmppTypeAbort);
  EXPECT_EQ(rmpp_status(abort), kRmppStatusBadSegment);
  EXPECT_EQ(ntohs(static_cast<std::uint16_t>(sent.back().request.dlid)), 3) << "back to the segment's sender";
  pump(t0);
  EXPECT_EQ(layer.counters().aborts_received, 1u);
  const std::size_t done = sent.size();
  layer.on_timer(t0 + 10s);
  EXPECT_EQ(segments_sent_by(1, done).size(), 0u) << "an aborted send is not resent";
  EXPECT_TRUE(read(x.sa).empty()) << "and ends unreported: ib_umad reports timeouts only";
}

TEST_F(MadLayerTest, AnAckForSegmentsNeverSentIsAborted) {
  const auto x = ask_for_table(30);
  answer(x);
  const Bytes first(mad_of(sent.back().request).begin(), mad_of(sent.back().request).end());
  skip();
  layer.on_packet(1, from_wire(control_mad(first, kRmppTypeAck, 0, 5, 65)), t0);
  ASSERT_EQ(sent.back().ca, 1u);
  EXPECT_EQ(rmpp_type(mad_of(sent.back().request)), kRmppTypeAbort);
  EXPECT_EQ(rmpp_status(mad_of(sent.back().request)), kRmppStatusSegmentTooBig);
  pump(t0);
  EXPECT_TRUE(read(x.requester).empty()) << "the ABORT is the twin's own";
  const std::size_t done = sent.size();
  layer.on_timer(t0 + 2s);
  EXPECT_EQ(segments_sent_by(1, done).size(), 0u);
}

TEST_F(MadLayerTest, WhatIbsimCannotTakeNowWaitsInTheOutbox) {
  const auto x = ask_for_table(30);
  answer(x);
  wire_busy = true;
  pump(t0);  // segment 1 arrives; its ACK cannot go yet
  EXPECT_EQ(layer.output_waits_for(), 0u);
  EXPECT_EQ(segments_sent_by(1).size(), 1u);
  wire_busy = false;
  layer.flush_output();
  EXPECT_EQ(layer.output_waits_for(), std::nullopt);
  pump(t0);
  expect_table_once(x);
}

TEST_F(MadLayerTest, RequestsGoToTheAgentRegisteredForTheirMethod) {
  const int fd = open();
  agent(fd, 0x03, 0, {});            // a client: no methods
  const int reports = agent(fd, 0x03, 0, {0x06});  // Report
  Bytes report = sa_mad(0x06, 0x99);
  layer.on_packet(0, from_wire(report), t0);
  EXPECT_EQ(header(read(fd)).id, static_cast<std::uint32_t>(reports));
  layer.on_packet(0, from_wire(sa_mad(0x01, 0x98)), t0);  // a GET: nobody serves it here
  EXPECT_TRUE(read(fd).empty());
  EXPECT_EQ(layer.counters().undeliverable_requests, 1u);
  const int other_ca = open(1);
  const int elsewhere = agent(other_ca, 0x03, 0, {0x06});
  ASSERT_GE(elsewhere, 0);
  layer.on_packet(1, from_wire(report), t0);
  EXPECT_EQ(read(other_ca).size(), 64u + 256) << "each CA's agents get their own CA's MADs";
  EXPECT_TRUE(read(fd).empty());
}

TEST_F(MadLayerTest, BadWritesAndIoctlsGetTheKernelsErrors) {
  const int fd = open();
  EXPECT_EQ(write(fd, umad(0, sa_mad(0x01, 1)), t0), -EINVAL) << "no agent 0 yet";
  EXPECT_EQ(layer.write(fd, Bytes(40).data(), 40, t0), -EINVAL) << "shorter than a header";
  AgentSpec bad;
  bad.qpn = 2;
  EXPECT_EQ(layer.register_agent(fd, bad), -EINVAL);
  EXPECT_EQ(layer.unregister_agent(fd, 5), -EINVAL);
  Bytes tiny(32);
  EXPECT_EQ(layer.read(fd, tiny.data(), tiny.size()), -EINVAL);
  for (unsigned i = 0; i < kAgentsPerFile; ++i) ASSERT_GE(agent(fd, 0x03), 0);
  EXPECT_EQ(agent(fd, 0x03), -ENOMEM);
}

TEST_F(MadLayerTest, TheDescriptorIsReadableWhileAMadWaits) {
  const int fd = open();
  agent(fd, 0x03, 0, {0x06});
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 0);
  layer.on_packet(0, from_wire(sa_mad(0x06, 1)), t0);
  layer.on_packet(0, from_wire(sa_mad(0x06, 2)), t0);
  EXPECT_EQ(::poll(&p, 1, 0), 1);
  read(fd);
  EXPECT_EQ(::poll(&p, 1, 0), 1) << "one more waits";
  read(fd);
  EXPECT_EQ(::poll(&p, 1, 0), 0);
}

}  // namespace
}  // namespace ibat::umad_twin
