// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Forged SA answers against the fabric's request matcher (MadRequester, via SaClient), as a rogue
// node on the fabric could send them (docs/security.md): each forgery is dropped and counted, the
// query stays outstanding, and the genuine answer from the SM LID still completes it exactly once.
// The basic cases (one wrong LID, class, method, attribute, TID, a duplicate) are in
// sa_client_test.cpp; these add truncated MADs, transport errors, a stream of every forgery
// before the real answer, the old SM after a fail-over, and answers to finished queries.
#include <gtest/gtest.h>

#include <asio/io_context.hpp>

#include "fabric/sa_client.h"
#include "fake_sender.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;
using test::path_answer;
using test::sa_answer;

constexpr core::Lid kSmLid{1};
constexpr core::Lid kRogueLid{66};

core::Gid gid(std::uint64_t guid) { return core::Gid::from_parts(0xfe80000000000000ULL, guid); }

core::PathRecord path_to(const core::Gid& dgid, std::uint16_t dlid) {
  core::PathRecord p;
  p.sgid = gid(3);
  p.dgid = dgid;
  p.slid = core::Lid{5};
  p.dlid = core::Lid{dlid};
  p.mtu = 4;
  p.rate = 3;
  p.pkey = core::Pkey{0xFFFF};
  return p;
}

class ForgedSaAnswers : public ::testing::Test {
 protected:
  ForgedSaAnswers() { sa.set_sm(kSmLid, 0); }

  void start(std::uint64_t id = 1) {
    core::PathQuery q;
    q.id = id;
    q.sgid = gid(3);
    q.dgid = gid(0xb);
    sa.query_path(q, [this](const core::QueryResult& r) { results.push_back(r); });
  }
  const OutgoingMad& request() const { return sender.sent.back(); }
  ReceivedMad genuine(std::uint16_t dlid = 12) const { return path_answer(request(), path_to(gid(0xb), dlid), kSmLid); }

  asio::io_context loop;
  test::FakeSender sender;
  MadRequester requester{loop, sender, 7};
  SaClient sa{requester, RetryPolicy{5ms, 2, 0.25, 8}};
  std::vector<core::QueryResult> results;
};

TEST_F(ForgedSaAnswers, TruncatedMadsAreCountedInvalidAndTheQueryStillCompletes) {
  start();
  for (std::size_t size : {0u, 1u, 8u, 23u}) {  // shorter than the 24-byte MAD header
    ReceivedMad cut = genuine(99);
    cut.bytes.resize(size);
    EXPECT_TRUE(requester.on_receive(cut)) << size;  // consumed, not passed on as unsolicited
  }
  EXPECT_TRUE(results.empty());
  EXPECT_EQ(requester.counters().invalid_responses, 4u);
  EXPECT_EQ(requester.outstanding(), 1u);
  requester.on_receive(genuine());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error, core::Error::ok);
  EXPECT_EQ(results[0].path.dlid.value, 12);
}

TEST_F(ForgedSaAnswers, AnswerCutAfterItsHeaderFailsTheQueryAndNeverYieldsAPath) {
  start();
  ReceivedMad header_only = genuine();
  header_only.bytes.resize(mad::kMadHeaderSize);  // what a short read would leave
  requester.on_receive(header_only);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error, core::Error::invalid);
}

TEST_F(ForgedSaAnswers, TransportErrorStatusNeverCompletesAQuery) {
  start();
  ReceivedMad failed_send = genuine(99);
  failed_send.status = 110;  // ETIMEDOUT from umad: the kernel's own match of our send
  EXPECT_TRUE(requester.on_receive(failed_send));
  EXPECT_TRUE(results.empty());
  EXPECT_EQ(requester.outstanding(), 1u);
  requester.on_receive(genuine());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error, core::Error::ok);
}

TEST_F(ForgedSaAnswers, EveryForgeryBeforeTheRealAnswerIsDroppedAndCounted) {
  start();
  const auto record = mad::encode_path_record(path_to(gid(0xb), 99));
  std::vector<ReceivedMad> forgeries;
  forgeries.push_back(path_answer(request(), path_to(gid(0xb), 99), kRogueLid));  // not the SM
  forgeries.push_back(sa_answer(request(), mad::attr::kNodeInfo, record, kSmLid));
  ReceivedMad method = genuine(99);
  method.bytes[3] = mad::method::kGetTableResp;
  forgeries.push_back(method);
  ReceivedMad mgmt_class = genuine(99);
  mgmt_class.bytes[1] = mad::mgmt_class::kSubnDirectedRoute;
  forgeries.push_back(mgmt_class);
  ReceivedMad zero_lid = genuine(99);
  zero_lid.slid = core::Lid{0};
  forgeries.push_back(zero_lid);
  const std::size_t invalid = forgeries.size();
  for (int low_tid_byte : {12, 13, 14, 15}) {  // a TID that differs from ours in its low 32 bits
    ReceivedMad tid = genuine(99);
    tid.bytes[static_cast<std::size_t>(low_tid_byte)] ^= 0x01;
    forgeries.push_back(tid);
  }
  for (const ReceivedMad& forged : forgeries) requester.on_receive(forged);

  EXPECT_TRUE(results.empty());
  EXPECT_EQ(requester.counters().invalid_responses, invalid);
  EXPECT_EQ(requester.counters().late_or_duplicate, forgeries.size() - invalid);
  EXPECT_EQ(requester.outstanding(), 1u);

  requester.on_receive(genuine());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error, core::Error::ok);
  EXPECT_EQ(results[0].path.dlid.value, 12);  // not one of the forged DLID 99s
}

TEST_F(ForgedSaAnswers, TheOldSmIsNotBelievedAfterAFailOver) {
  start();
  sa.set_sm(core::Lid{7}, 0);  // the SM moved: retries now go to LID 7
  while (sender.sent.size() < 2 && loop.run_one() > 0) {
  }
  ASSERT_EQ(sender.sent.size(), 2u);
  requester.on_receive(path_answer(request(), path_to(gid(0xb), 99), kSmLid));  // the old SM's LID
  EXPECT_TRUE(results.empty());
  EXPECT_EQ(requester.counters().invalid_responses, 1u);
  requester.on_receive(path_answer(request(), path_to(gid(0xb), 12), core::Lid{7}));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].path.dlid.value, 12);
}

TEST_F(ForgedSaAnswers, AnswersAfterCompletionCannotChangeTheResult) {
  start();
  const ReceivedMad real = genuine();
  requester.on_receive(real);
  ASSERT_EQ(results.size(), 1u);
  requester.on_receive(genuine(99));  // same TID, from the SM LID, but the query is finished
  requester.on_receive(real);
  EXPECT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].path.dlid.value, 12);
  EXPECT_EQ(requester.counters().late_or_duplicate, 2u);
}

TEST_F(ForgedSaAnswers, RecordForAnotherDestinationFromTheSmIsNotServed) {
  start();
  requester.on_receive(path_answer(request(), path_to(gid(0xc), 99), kSmLid));  // valid MAD, wrong DGID
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error, core::Error::invalid);
}

TEST_F(ForgedSaAnswers, ARequestIsNotTakenForAnAnswer) {
  start();
  ReceivedMad get = genuine(99);
  get.bytes[3] = mad::method::kGet;  // same TID, but a request: handed to the trap handler instead
  EXPECT_FALSE(requester.on_receive(get));
  EXPECT_TRUE(results.empty());
  EXPECT_EQ(requester.outstanding(), 1u);
}

}  // namespace
}  // namespace ibat::fabric
