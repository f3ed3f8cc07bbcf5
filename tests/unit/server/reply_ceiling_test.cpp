// ReplyCeiling: the daemon's total of unread reply bytes; past the ceiling the connection holding
// the most is named once, and its bytes leave the total.
#include <gtest/gtest.h>

#include "server/daemon/reply_ceiling.h"

namespace ibat::server {
namespace {

const Connection* conn(std::uintptr_t n) { return reinterpret_cast<const Connection*>(n * 16); }

TEST(ReplyCeiling, UnderTheCeilingNobodyIsCut) {
  ReplyCeiling ceiling(100);
  ceiling.hold(conn(1), 60);
  ceiling.hold(conn(2), 40);
  EXPECT_EQ(ceiling.total(), 100u);
  EXPECT_EQ(ceiling.take_largest_if_over(), nullptr);
  ceiling.hold(conn(1), 10);  // a write went out
  EXPECT_EQ(ceiling.total(), 50u);
  ceiling.hold(conn(2), 0);   // closed, or everything written
  EXPECT_EQ(ceiling.total(), 10u);
}

TEST(ReplyCeiling, OverItTheLargestHolderIsCutFirstAndOnlyAsManyAsNeeded) {
  ReplyCeiling ceiling(100);
  ceiling.hold(conn(1), 30);
  ceiling.hold(conn(2), 50);
  ceiling.hold(conn(3), 40);  // 120: over
  EXPECT_EQ(ceiling.take_largest_if_over(), conn(2));
  EXPECT_EQ(ceiling.total(), 70u);
  EXPECT_EQ(ceiling.take_largest_if_over(), nullptr);  // under again: nobody else
  ceiling.hold(conn(2), 0);  // the cut connection closes: nothing changes
  EXPECT_EQ(ceiling.total(), 70u);
}

TEST(ReplyCeiling, ALowerLimitTakesEffectAtTheNextCheck) {
  ReplyCeiling ceiling(1000);
  ceiling.hold(conn(1), 300);
  ceiling.hold(conn(2), 200);
  ceiling.set_limit(250);
  EXPECT_EQ(ceiling.take_largest_if_over(), conn(1));
  EXPECT_EQ(ceiling.take_largest_if_over(), nullptr);
  EXPECT_EQ(ceiling.total(), 200u);
}

}  // namespace
}  // namespace ibat::server
