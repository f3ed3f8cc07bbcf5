// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SmChangeDetector: which PortInfo/SMInfo sample sequences mean "local port changed" and
// "SM changed" (restart on the same node, fail-over), and which mean nothing.
#include <gtest/gtest.h>

#include "fabric/sm_change_detector.h"

namespace ibat::fabric {
namespace {

PortSample port(std::uint16_t lid, std::uint16_t sm_lid, bool active = true) { return {core::Lid{lid}, core::Lid{sm_lid}, 0, active}; }
SmSample master(std::uint64_t guid, std::uint32_t act) { return {guid, act, true}; }

class SmChangeDetectorTest : public ::testing::Test {
 protected:
  PollVerdict poll(std::optional<PortSample> p, std::optional<SmSample> sm) {
    return detector.observe({p, sm, std::nullopt});
  }
  void settle() {
    ASSERT_TRUE(poll(port(5, 1), master(0x200, 100)).local_port_changed);
    ASSERT_FALSE(poll(port(5, 1), master(0x200, 120)).sm_changed);
  }
  SmChangeDetector detector;
};

TEST_F(SmChangeDetectorTest, FirstSampleIsAPortChangeNotAnSmChange) {
  const PollVerdict v = poll(port(5, 1), master(0x200, 10));
  EXPECT_TRUE(v.local_port_changed);
  EXPECT_FALSE(v.sm_changed);
}

TEST_F(SmChangeDetectorTest, SteadyFabricReportsNothing) {
  settle();
  const PollVerdict v = poll(port(5, 1), master(0x200, 500));
  EXPECT_FALSE(v.local_port_changed);
  EXPECT_FALSE(v.sm_changed);
}

TEST_F(SmChangeDetectorTest, LocalLidChangeIsAPortChange) {
  settle();
  const PollVerdict v = poll(port(9, 1), master(0x200, 130));
  EXPECT_TRUE(v.local_port_changed);
  EXPECT_FALSE(v.sm_changed);
  EXPECT_EQ(detector.port()->lid, core::Lid{9});
}

TEST_F(SmChangeDetectorTest, PortDownIsAPortChange) {
  settle();
  EXPECT_TRUE(poll(port(5, 1, false), std::nullopt).local_port_changed);
}

TEST_F(SmChangeDetectorTest, SmLidChangeIsAFailOver) {
  settle();
  const PollVerdict v = poll(port(5, 7), master(0x300, 3));
  EXPECT_TRUE(v.local_port_changed);
  EXPECT_TRUE(v.sm_changed);
}

TEST_F(SmChangeDetectorTest, NewSmGuidOnSameLidIsAnSmChange) {
  settle();
  EXPECT_TRUE(poll(port(5, 1), master(0x300, 500)).sm_changed);
}

TEST_F(SmChangeDetectorTest, ActCountGoingBackwardsIsARestart) {
  settle();
  EXPECT_TRUE(poll(port(5, 1), master(0x200, 4)).sm_changed);
  EXPECT_FALSE(poll(port(5, 1), master(0x200, 9)).sm_changed);
}

TEST_F(SmChangeDetectorTest, UnreachableThenBackIsARestartReportedOnce) {
  settle();
  EXPECT_FALSE(poll(port(5, 1), std::nullopt).sm_changed);
  EXPECT_FALSE(poll(std::nullopt, std::nullopt).sm_changed);
  EXPECT_FALSE(poll(port(5, 1), SmSample{0x200, 1, false}).sm_changed);  // DISCOVERING
  EXPECT_TRUE(poll(port(5, 1), master(0x200, 900)).sm_changed);
  EXPECT_FALSE(poll(port(5, 1), master(0x200, 901)).sm_changed);
}

TEST_F(SmChangeDetectorTest, UnansweredPortInfoKeepsTheLastPort) {
  settle();
  const PollVerdict v = poll(std::nullopt, master(0x200, 130));
  EXPECT_FALSE(v.local_port_changed);
  EXPECT_EQ(detector.port()->lid, core::Lid{5});
}

TEST_F(SmChangeDetectorTest, SaForgettingOurSubscriptionIsARestartEvenIfActCountGrew) {
  settle();
  EXPECT_FALSE(detector.observe({port(5, 1), master(0x200, 5000), true}).sm_changed);
  EXPECT_TRUE(detector.observe({port(5, 1), master(0x200, 9000), false}).sm_changed);
  EXPECT_FALSE(detector.observe({port(5, 1), master(0x200, 9100), std::nullopt}).sm_changed);
}

TEST_F(SmChangeDetectorTest, PollsWithoutSmInfoLeaveTheSmPictureAlone) {
  settle();
  EXPECT_FALSE(detector.observe({port(5, 1), std::nullopt, std::nullopt, false}).sm_changed);
  EXPECT_FALSE(detector.observe({port(5, 1), std::nullopt, true, false}).sm_changed);
  EXPECT_FALSE(poll(port(5, 1), master(0x200, 130)).sm_changed);  // not "gone, then back"
}

TEST_F(SmChangeDetectorTest, RoutineSaCheckThatFindsUsForgottenIsOneRestart) {
  settle();
  EXPECT_TRUE(detector.observe({port(5, 1), std::nullopt, false, false}).sm_changed);
  EXPECT_FALSE(poll(port(5, 1), master(0x200, 3)).sm_changed);  // the new SM's baseline
}

TEST_F(SmChangeDetectorTest, SaForgettingUsCountsEvenWithNoSmBaseline) {
  settle();
  detector.forget_sm();
  EXPECT_TRUE(detector.observe({port(5, 1), master(0x200, 5000), false}).sm_changed);
}

TEST_F(SmChangeDetectorTest, ForgetSmMakesTheNextMasterTheBaseline) {
  settle();
  detector.forget_sm();
  EXPECT_FALSE(poll(port(5, 1), master(0x200, 2)).sm_changed);
}

}  // namespace
}  // namespace ibat::fabric
