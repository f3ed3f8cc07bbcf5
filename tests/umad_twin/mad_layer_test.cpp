// The twin's umad file semantics, with a wire that records what would go to ibsim: agents, the TID
// rewrite and the routing of answers, ENOSPC for a short buffer, RMPP only for RMPP agents,
// request dispatch by method, and the kernel's send timeout and retries.
#include "mad_layer.h"

#include <arpa/inet.h>
#include <endian.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <rdma/ib_user_mad.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
    sent.push_back({ca, r, block});
    return true;
  }};
  std::vector<Sent> sent;
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
  // A umad as libibumad writes it: header (agent, timeout, retries, destination) + MAD.
  static Bytes umad(int agent, Bytes mad, std::uint32_t timeout_ms = 0, std::uint32_t retries = 0) {
    ib_user_mad_hdr h{};
    h.id = static_cast<std::uint32_t>(agent);
    h.timeout_ms = timeout_ms;
    h.retries = retries;
    h.lid = htons(1);
    h.qpn = htonl(1);
    Bytes out(sizeof h);
    std::memcpy(out.data(), &h, sizeof h);
    out.insert(out.end(), mad.begin(), mad.end());
    return out;
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
  const int requester = open(0);
  const int responder = open(1);  // another CA: the SA's node
  const int ask = agent(requester, 0x03, 1);
  const int serve = agent(responder, 0x03, 1, {0x12});  // GetTable requests
  write(requester, umad(ask, sa_mad(0x12, 0x42), 100), t0);
  ASSERT_EQ(sent.size(), 1u);
  layer.on_packet(1, from_wire(mad_of(sent[0].request), 3), t0);
  const Bytes request = read(responder);
  ASSERT_EQ(request.size(), 64u + 256);
  EXPECT_EQ(header(request).id, static_cast<std::uint32_t>(serve));

  Bytes table = sa_mad(0x92, tid(std::span(request).subspan(64)), 56 + 30 * 64);  // 30 records
  table[26] = 0x01;  // RMPP ACTIVE, version left 0 as OpenSM does
  for (std::size_t i = 56; i < table.size(); ++i) table[i] = static_cast<std::uint8_t>(i * 7);
  const std::size_t before = sent.size();
  ASSERT_EQ(write(responder, umad(serve, table), t0), static_cast<ssize_t>(64 + table.size()));
  const std::size_t segments = sent.size() - before;
  EXPECT_EQ(segments, (30u * 64 + 199) / 200);
  for (std::size_t i = before; i < sent.size(); ++i) layer.on_packet(0, from_wire(mad_of(sent[i].request), 1), t0 + 1ms);

  const Bytes small = read(requester);
  EXPECT_TRUE(small.empty());
  EXPECT_EQ(last_errno, ENOSPC);
  Bytes header_only(64);
  EXPECT_EQ(layer.read(requester, header_only.data(), 64 + 256), -ENOSPC);
  EXPECT_EQ(header(header_only).length, 64u + table.size()) << "the length libibumad grows its buffer to";
  const Bytes whole = read(requester, 64 + table.size());
  ASSERT_EQ(whole.size(), 64u + table.size());
  EXPECT_TRUE(std::equal(whole.begin() + 64 + 56, whole.end(), table.begin() + 56));
  EXPECT_EQ(layer.counters().reassembled, 1u);
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
  ASSERT_EQ(sent.size() - before, 3u);
  layer.on_packet(0, from_wire(mad_of(sent[before].request)), t0);
  EXPECT_EQ(read(a).size(), 64u + 256) << "the first segment, as it came";
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
