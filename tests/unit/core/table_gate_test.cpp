// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TableGate: a wanted table goes only once a probe found the SA's queue shorter than kSaQueueTarget; a
// probe that finds it longer sets the next one at least that far off, doubling after each, never
// more than kQueueDrains x what it saw; the subnet's first probes are spread over n x kProbeSlot,
// after what the caller holds them for.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/table_gate.h"

namespace ibat::core {
namespace {

using namespace std::chrono_literals;

TimePoint at(Duration d) { return TimePoint{d}; }

// The probe due now goes and is answered after `waited`; returns whether the gate opened.
bool probe(TableGate& gate, Duration waited) {
  const TimePoint sent = *gate.probe_due();
  gate.on_probe_sent(sent);
  EXPECT_FALSE(gate.probe_due());  // one probe at a time
  return gate.on_probe_result(sent + waited, false, waited);  // an SA whose base is 0
}

TEST(TableGate, NothingIsProbedUntilATableIsWanted) {
  TableGate gate(1);
  EXPECT_FALSE(gate.probe_due());
  EXPECT_FALSE(gate.open());
}

TEST(TableGate, AProbeThatFindsTheQueueShortOpensTheGate) {
  TableGate gate(1);
  gate.want(at(10s), 0, at(10s));
  ASSERT_TRUE(gate.probe_due());
  EXPECT_EQ(*gate.probe_due(), at(10s));  // a subnet of unknown size: at once
  EXPECT_TRUE(probe(gate, kSaQueueTarget - 1ms));
  EXPECT_TRUE(gate.open());
  EXPECT_FALSE(gate.probe_due());
  gate.clear();
  EXPECT_FALSE(gate.open());
  EXPECT_FALSE(gate.probe_due());
}

TEST(TableGate, ALongQueueHoldsTheTableAtLeastAsLongAsItAndTheWaitDoublesUpToFourTimesIt) {
  TableGate gate(7);
  gate.want(at(0s), 0, at(0s));
  Duration last_gap{0};
  for (int i = 0; i < 6; ++i) {
    const TimePoint sent = *gate.probe_due();
    gate.on_probe_sent(sent);
    EXPECT_FALSE(gate.on_probe_result(sent + 1s, false, 1s));
    EXPECT_FALSE(gate.open());
    const Duration gap = *gate.probe_due() - (sent + 1s);
    // max(1 s, 2 x the last) capped at 4 x 1 s, drawn from [0.5, 1.5] x it.
    const Duration nominal = std::min(Duration(4s), std::max(Duration(1s), last_gap * 2));
    EXPECT_GE(gap, nominal / 2);
    EXPECT_LE(gap, nominal + nominal / 2);
    last_gap = nominal;
  }
  EXPECT_TRUE(probe(gate, 1ms));
}

TEST(TableGate, ALostProbeHoldsTheTableAsALongQueueDoes) {
  TableGate gate(3);
  gate.want(at(0s), 0, at(0s));
  gate.on_probe_sent(at(0s));
  EXPECT_FALSE(gate.on_probe_result(at(10ms), true, 10ms));
  EXPECT_FALSE(gate.open());
  ASSERT_TRUE(gate.probe_due());
  EXPECT_GE(*gate.probe_due(), at(15ms));
}

TEST(TableGate, TheSubnetsFirstProbesAreSpreadOverItsSizeAfterTheHold) {
  std::vector<TimePoint> due;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    TableGate gate(seed);
    gate.want(at(1s), 4000, at(3s));
    due.push_back(*gate.probe_due());
  }
  const auto [first, last] = std::minmax_element(due.begin(), due.end());
  EXPECT_GE(*first, at(3s));
  EXPECT_LE(*last, at(3s) + TableGate::kProbeSlot * 4000);
  EXPECT_GT(*last - *first, TableGate::kProbeSlot * 3000);  // spread, not in step
}

TEST(TableGate, ANewWantForgetsTheOldProbeAndItsWait) {
  TableGate gate(5);
  gate.want(at(0s), 0, at(0s));
  gate.on_probe_sent(at(0s));
  gate.want(at(1s), 0, at(1s));  // an SM change: the answer to the old probe is not awaited
  EXPECT_EQ(*gate.probe_due(), at(1s));
  EXPECT_TRUE(probe(gate, 1ms));
}

}  // namespace
}  // namespace ibat::core
