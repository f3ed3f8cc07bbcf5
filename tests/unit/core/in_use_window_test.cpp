// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// InUseWindow: after a LID move the subnet's renewals of paths in use are n x (this host's count)
// GETs of kGetCostPaths paths each at the assumed speed; a host renews at its draw's place in that
// window, its table waits 1.5 x the window when wanted within kInUse of the move, and a move
// starts a new count.
#include <gtest/gtest.h>

#include "core/in_use_window.h"

namespace ibat::core {
namespace {

using namespace std::chrono_literals;

TimePoint at(Duration d) { return TimePoint{d}; }

TEST(InUseWindow, NoMoveNoWindowAndNoHold) {
  InUseWindow w;
  EXPECT_FALSE(w.moved_at());
  EXPECT_EQ(w.length(1000, 250'000), Duration::zero());
  EXPECT_EQ(w.table_hold(at(5s), 1000, 250'000), Duration::zero());
}

TEST(InUseWindow, TheWindowIsTheSubnetsGetsAtTheAssumedSpeed) {
  InUseWindow w;
  w.on_lids_moved(at(10s), 0.5);
  EXPECT_EQ(w.moved_at(), at(10s));
  EXPECT_EQ(w.length(1000, 250'000), Duration::zero());  // nothing in use: no window
  w.found_in_use(64);
  // 1,000 hosts x 64 GETs x 6 paths / 250,000 paths a second.
  EXPECT_EQ(w.length(1000, 250'000), 1536ms);
  EXPECT_EQ(w.length(4000, 250'000), 6144ms);
  EXPECT_EQ(w.length(1000, 0), Duration::zero());  // in_use_window_paths_per_s = 0: no window
  w.found_in_use(10);  // a later walk that found fewer keeps the largest count
  EXPECT_EQ(w.length(1000, 250'000), 1536ms);
}

TEST(InUseWindow, AHostRenewsAtItsPlaceInTheWindow) {
  InUseWindow first;
  first.on_lids_moved(at(10s), 0.0);
  first.found_in_use(64);
  EXPECT_EQ(first.release_at(1000, 250'000), at(10s));
  InUseWindow later;
  later.on_lids_moved(at(10s), 0.75);
  later.found_in_use(64);
  EXPECT_EQ(later.release_at(1000, 250'000), at(10s + 1152ms));
}

TEST(InUseWindow, TheTableWaitsHalfAgainTheWindowOnlyJustAfterAMove) {
  InUseWindow w;
  w.on_lids_moved(at(10s), 0.2);
  w.found_in_use(64);
  EXPECT_EQ(w.table_hold(at(10s), 1000, 250'000), 2304ms);
  EXPECT_EQ(w.table_hold(at(10s) + InUseWindow::kInUse - 1ms, 1000, 250'000), 2304ms);
  // A table wanted a minute after the move (an SM change later on) waits for no renewals.
  EXPECT_EQ(w.table_hold(at(10s) + InUseWindow::kInUse, 1000, 250'000), Duration::zero());
}

TEST(InUseWindow, AMoveStartsANewCount) {
  InUseWindow w;
  w.on_lids_moved(at(10s), 0.5);
  w.found_in_use(64);
  w.on_lids_moved(at(100s), 0.5);
  EXPECT_EQ(w.moved_at(), at(100s));
  EXPECT_EQ(w.length(1000, 250'000), Duration::zero());
}

}  // namespace
}  // namespace ibat::core
