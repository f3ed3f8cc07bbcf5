// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaRoundTrip: the port's one estimate of its SA: the smoothed round trip (1/8 gain), the smallest
// one answered (the base), the queue an answer waited in, and a lost query's lifetime standing in
// for the round trip only until the first answer.
#include <gtest/gtest.h>

#include "core/sa_round_trip.h"

namespace ibat::core {
namespace {

using namespace std::chrono_literals;

TEST(SaRoundTrip, NothingMeasuredIsZero) {
  const SaRoundTrip sa;
  EXPECT_EQ(sa.srtt(), 0s);
  EXPECT_EQ(sa.base(), 0s);
}

TEST(SaRoundTrip, TheFirstAnswerIsTheRoundTripAndTheBaseThenTheyMoveApart) {
  SaRoundTrip sa;
  sa.on_answer(8ms);
  EXPECT_EQ(sa.srtt(), 8ms);
  EXPECT_EQ(sa.base(), 8ms);
  sa.on_answer(16ms);  // 1/8 of the 8 ms difference
  EXPECT_EQ(sa.srtt(), 9ms);
  EXPECT_EQ(sa.base(), 8ms);
  sa.on_answer(1ms);  // a shorter one is the new base
  EXPECT_EQ(sa.base(), 1ms);
  EXPECT_EQ(sa.srtt(), 9ms - 1ms);
}

TEST(SaRoundTrip, TheQueueIsTheRoundTripLessTheBase) {
  SaRoundTrip sa;
  sa.on_answer(2ms);
  sa.on_answer(30ms);
  EXPECT_EQ(sa.queue(30ms), 28ms);
  EXPECT_EQ(sa.queue(2ms), 0ms);
}

TEST(SaRoundTrip, ALostQueryStandsInForTheRoundTripOnlyBeforeAnyAnswer) {
  SaRoundTrip sa;
  sa.on_lost(3s);
  EXPECT_EQ(sa.srtt(), 3s);
  sa.on_lost(1s);  // the longest lifetime so far
  EXPECT_EQ(sa.srtt(), 3s);
  EXPECT_EQ(sa.base(), 0s);
  sa.on_answer(10ms);  // the first answer replaces it
  EXPECT_EQ(sa.srtt(), 10ms);
  EXPECT_EQ(sa.base(), 10ms);
  sa.on_lost(5s);  // answered once: a loss says nothing of the round trip
  EXPECT_EQ(sa.srtt(), 10ms);
}

TEST(SaRoundTrip, ANegativeRoundTripCountsAsZero) {
  SaRoundTrip sa;
  sa.on_answer(-1ms);  // a clock read before the send's: never below zero
  EXPECT_EQ(sa.srtt(), 0s);
  EXPECT_EQ(sa.base(), 0s);
}

}  // namespace
}  // namespace ibat::core
