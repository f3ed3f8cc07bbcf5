// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// kernel/run_queue.h: the runnable count parsed from /proc/loadavg texts, malformed ones refused,
// and a sample of this host's own /proc/loadavg.
#include "kernel/run_queue.h"

#include <gtest/gtest.h>

namespace ibat::kernel {
namespace {

TEST(RunQueue, TheRunnableCountIsTheNumberBeforeTheSlashOfTheFourthField) {
  EXPECT_EQ(parse_loadavg_runnable("0.52 0.58 0.59 2/345 12345\n"), 2u);
  EXPECT_EQ(parse_loadavg_runnable("10.00 9.50 8.25 131/2048 99"), 131u);
}

TEST(RunQueue, MalformedTextsGiveNothing) {
  for (const char* text : {"", "0.52 0.58 0.59", "0.52 0.58 0.59 ", "0.52 0.58 0.59 /345 1", "0.52 0.58 0.59 x/345 1",
                           "0.52 0.58 0.59 2", "0.52 0.58 0.59 2 345", "0.52 0.58 0.59 99999999999/3 1"})
    EXPECT_EQ(parse_loadavg_runnable(text), std::nullopt) << '"' << text << '"';
}

TEST(RunQueue, ThisHostCanBeSampled) {
  std::optional<RunQueueSample> sample = sample_run_queue();
  ASSERT_TRUE(sample);
  EXPECT_GE(sample->runnable, 1u);  // this test is running
  EXPECT_GE(sample->cpus, 1u);
}

std::optional<RunQueueSample> crowded() { return RunQueueSample{9, 2}; }

TEST(RunQueue, FeedSamplesOnlyWhenThePolicyWantsIt) {
  core::SpinPolicy spin;
  const core::TimePoint t0 = core::TimePoint{} + std::chrono::seconds(1);
  feed(spin, t0, crowded);
  feed(spin, t0 + std::chrono::milliseconds(1), crowded);  // too soon: not sampled
  EXPECT_TRUE(spin.may_spin());
  feed(spin, t0 + core::SpinPolicy::kSampleEvery, crowded);
  EXPECT_FALSE(spin.may_spin());
}

}  // namespace
}  // namespace ibat::kernel
