// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Late answers: an answer that comes after its request was resent or failed. The resend rule and
// the timers with scripted time (MadAttempts, MadTimers: the late answer completes the request once
// and times nothing), then SaClient over a fake transport (MadRequester's own short timers, run on
// this thread: no sleep): an answer after its GET or GetTable failed completes nothing, counts as
// late, and is no SA answer for the GetTable verdict (SaTables), while the port monitor still
// hears it (MadRequester::on_answer). What fabric.loss and faults.loss show on the lab only as
// totals (docs/fabric.md, "What the unit tests show without a lab").
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <asio/io_context.hpp>

#include "fabric/mad_attempts.h"
#include "fabric/mad_timers.h"
#include "fabric/sa_client.h"
#include "fake_sender.h"
#include "mad/path_record.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;

constexpr core::Lid kSmLid{1};
const core::TimePoint kStart{1s};

// Attempt 0 lost in time: its timer fires, the resend goes out, then attempt 0's answer comes. It
// completes the request (one TID), names the running attempt, and is no sample of the SA's round
// trip (Karn); the timeout's back-off stays until a first attempt is answered.
TEST(LateAnswers, AnAnswerAfterTheResendCompletesOnceAndTimesNothing) {
  RetryPolicy policy{200ms, 3};
  policy.jitter = 0.0;
  const TimedRequest get{.remote = true, .mgmt_class = mad::mgmt_class::kSubnAdm, .attr_id = 0, .table = false,
                         .dlid = kSmLid};
  MadTimers timers;
  std::mt19937_64 rng(1);
  MadAttempts mad;
  const core::TimePoint fired = mad.send(kStart, timers.policy_now(get, policy), rng);
  ASSERT_TRUE(mad.timed_out(policy));
  timers.on_timeout(get, fired - mad.sent());
  const core::TimePoint resend_fires = mad.send(fired, timers.policy_now(get, policy), rng);
  EXPECT_GT(resend_fires - fired, 200ms) << "the resend waits longer";

  const AttemptAnswer late = mad.answered(fired + 50ms);  // attempt 0's answer, 250 ms after it went
  EXPECT_EQ(late.attempt, 1U);
  EXPECT_EQ(late.round_trip, 50ms) << "from the resend: not the SA's round trip";
  EXPECT_EQ(mad.deadline(), MadAttempts::kNoTimer) << "complete: the resend's timer is void";
  timers.on_answer(get, late.attempt, late.round_trip, 0);
  ASSERT_NE(timers.round_trip(mad::mgmt_class::kSubnAdm, kSmLid), nullptr);
  EXPECT_EQ(timers.round_trip(mad::mgmt_class::kSubnAdm, kSmLid)->srtt(), 0ns) << "no sample";
  EXPECT_GT(timers.policy_now(get, policy).attempt_timeout(0, 0.0), 200ms) << "still backed off";

  // The next request's first attempt answered in 30 ms: that is a sample.
  MadAttempts next;
  next.send(resend_fires, timers.policy_now(get, policy), rng);
  const AttemptAnswer prompt = next.answered(resend_fires + 30ms);
  timers.on_answer(get, prompt.attempt, prompt.round_trip, 0);
  EXPECT_EQ(timers.round_trip(mad::mgmt_class::kSubnAdm, kSmLid)->srtt(), 30ms);
}

core::Gid gid(std::uint64_t guid) { return core::Gid::from_parts(0xfe80000000000000ULL, guid); }

const core::Gid kSelf = gid(0x10);
constexpr core::Pkey kPkey{0xFFFF};

// A scripted SA that answers only what the test hands over, late.
class LateSaAnswersTest : public ::testing::Test {
 protected:
  LateSaAnswersTest() {
    sa.set_sm(kSmLid, 0);
    sa.on_tables_off([this](const std::string& reason) { offs.push_back(reason); });
    requester.on_answer([this](core::Lid slid, core::TimePoint) {
      if (slid == kSmLid) ++heard;
    });
  }

  void start_table() {
    ASSERT_TRUE(sa.query_path_table(kSelf, kPkey, [this](const PathTable& t) { tables.push_back(t); }));
    path_requests.push_back(sender.sent.back());  // NodeRecord first, then PathRecord
  }
  void start_get() {
    core::PathQuery q;
    q.id = 7;
    q.sgid = kSelf;
    q.dgid = gid(0x20);
    q.pkey = kPkey;
    sa.query_path(q, [this](const core::QueryResult& r) { gets.push_back(r); });
    get_request = sender.sent.back();
  }
  // The path to 0x20 the SA would have answered, in time.
  static core::PathRecord path() {
    core::PathRecord p;
    p.sgid = kSelf;
    p.dgid = gid(0x20);
    p.slid = core::Lid{10};
    p.dlid = core::Lid{32};
    p.pkey = kPkey;
    p.reversible = true;
    return p;
  }
  // A PathRecord table answer to `request` holding that path.
  static ReceivedMad table_of(const OutgoingMad& request) {
    const auto record = mad::encode_path_record(path());
    return test::table_answer(request, mad::attr::kPathRecord, {{record.begin(), record.end()}}, 64, kSmLid);
  }

  asio::io_context loop;
  test::FakeSender sender;
  MadRequester requester{loop, sender, 13};
  SaClient sa{requester, RetryPolicy{5ms, 1, 0.25, 8}, TableOptions{100, true}};
  std::vector<PathTable> tables;
  std::vector<core::QueryResult> gets;
  std::vector<std::string> offs;
  std::vector<OutgoingMad> path_requests;
  OutgoingMad get_request;
  int heard = 0;
};

// The first table went unanswered (SA silent: tables stay on); the second is sent; then the first
// one's answer comes. It completes nothing and is no SA answer: the second, lost in turn with
// nothing else answered, is judged the SA silent again, and tables stay on.
TEST_F(LateSaAnswersTest, ATablesAnswerAfterItFailedCompletesNothingAndIsNoSaAnswer) {
  start_table();
  loop.run();
  ASSERT_EQ(tables.size(), 1U);
  ASSERT_EQ(tables[0].error, core::Error::timeout);
  ASSERT_TRUE(sa.tables_usable());

  start_table();
  const std::uint64_t late_before = requester.counters().late_or_duplicate;
  EXPECT_TRUE(requester.on_receive(table_of(path_requests[0])));
  EXPECT_EQ(requester.counters().late_or_duplicate, late_before + 1);
  EXPECT_EQ(tables.size(), 1U) << "the late answer completed nothing";
  EXPECT_EQ(sa.table_counters().answered, 0U);
  EXPECT_EQ(heard, 1) << "the monitor hears it: the SM's LID is alive";

  loop.restart();  // run() above ran out of work
  loop.run();
  ASSERT_EQ(tables.size(), 2U);
  EXPECT_EQ(tables[1].error, core::Error::timeout);
  EXPECT_EQ(tables[1].reason,
            "the SA did not answer the PathRecord GetTable (2 attempts), nor anything else meanwhile: down or sweeping");
  EXPECT_TRUE(sa.tables_usable());
  EXPECT_TRUE(offs.empty());
}

// A GET fails; a table is sent; the GET's answer comes while the table runs. The GET keeps its one
// result (timeout), the answer counts as late, and the table, lost in turn, is judged the SA
// silent: had the late answer counted, the table would have turned tables off. (The table goes
// after the GET has failed, so that no timer's order on a loaded machine decides the case.)
TEST_F(LateSaAnswersTest, AGetsAnswerAfterItFailedCompletesNothingAndIsNoSaAnswer) {
  start_get();
  loop.run();
  ASSERT_EQ(gets.size(), 1U);
  ASSERT_EQ(gets[0].error, core::Error::timeout);
  loop.restart();  // run() above ran out of work
  start_table();

  EXPECT_TRUE(requester.on_receive(test::path_answer(get_request, path(), kSmLid)));
  EXPECT_EQ(requester.counters().late_or_duplicate, 1U);
  EXPECT_EQ(gets.size(), 1U) << "not completed twice";
  EXPECT_EQ(heard, 1);

  loop.run();
  ASSERT_EQ(tables.size(), 1U);
  EXPECT_EQ(tables[0].reason,
            "the SA did not answer the PathRecord GetTable (2 attempts), nor anything else meanwhile: down or sweeping");
  EXPECT_TRUE(sa.tables_usable());
  EXPECT_TRUE(offs.empty());
}

}  // namespace
}  // namespace ibat::fabric
