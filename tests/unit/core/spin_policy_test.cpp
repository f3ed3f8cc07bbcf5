// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// core::SpinPolicy: polling is allowed while the host has no more runnable tasks than CPUs; it stops
// after kCrowdedSamples crowded samples in a row (not after one), resumes with the first sample that
// is not crowded, and samples at most every kSampleEvery.
#include "core/spin_policy.h"

#include <gtest/gtest.h>

namespace ibat::core {
namespace {

using namespace std::chrono_literals;

const TimePoint kStart = TimePoint{} + 10s;

TEST(SpinPolicy, SpinsWhileRunnableTasksFitTheCpus) {
  SpinPolicy spin;
  EXPECT_TRUE(spin.wants_sample(kStart));
  spin.on_sample(kStart, 2, 2);
  EXPECT_TRUE(spin.may_spin());
  EXPECT_FALSE(spin.wants_sample(kStart + SpinPolicy::kSampleEvery - 1ns));
  EXPECT_TRUE(spin.wants_sample(kStart + SpinPolicy::kSampleEvery));
}

TEST(SpinPolicy, OneCrowdedSampleIsNotEnoughToStop) {
  SpinPolicy spin;
  spin.on_sample(kStart, 3, 2);
  EXPECT_TRUE(spin.may_spin());
  spin.on_sample(kStart + 10ms, 2, 2);  // a kernel thread passing by
  spin.on_sample(kStart + 20ms, 3, 2);
  EXPECT_TRUE(spin.may_spin());
  EXPECT_EQ(spin.stops(), 0u);
}

TEST(SpinPolicy, CrowdedSamplesInARowStopItUntilASampleIsNot) {
  SpinPolicy spin;
  for (unsigned i = 0; i < SpinPolicy::kCrowdedSamples; ++i) spin.on_sample(kStart + i * 10ms, 9, 8);
  EXPECT_FALSE(spin.may_spin());
  spin.on_sample(kStart + 100ms, 12, 8);
  EXPECT_FALSE(spin.may_spin());
  EXPECT_EQ(spin.stops(), 1u);  // one stop, however long it lasts
  spin.on_sample(kStart + 110ms, 8, 8);
  EXPECT_TRUE(spin.may_spin());
}

TEST(SpinPolicy, NoSampleCountsAsCrowded) {
  SpinPolicy spin;
  spin.on_no_sample(kStart);
  spin.on_no_sample(kStart + 10ms);
  EXPECT_FALSE(spin.may_spin());
}

TEST(SpinPolicy, OneCpuNeverSpinsWhileTheOtherSideRuns) {
  SpinPolicy spin;  // the poller and the side it waits for: two runnable tasks on one CPU
  spin.on_sample(kStart, 2, 1);
  spin.on_sample(kStart + 10ms, 2, 1);
  EXPECT_FALSE(spin.may_spin());
}

}  // namespace
}  // namespace ibat::core
