// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The fixture of the Resolver's event tests (resolver_events_test.cpp, resolver_new_lids_test.cpp):
// ResolverTest with a cache filled through the fake SA.
#pragma once

#include "test_support.h"

namespace ibat::core::testing {

class ResolverFilledTest : public ResolverTest {
 protected:
  // Fills the cache with n valid entries from SLID 1: remote_gid(i) has DLID 100 + i, remote_gid(1)
  // used least recently, remote_gid(n) most.
  void populate(std::uint64_t n) {
    for (std::uint64_t i = 1; i <= n; ++i) {
      resolve_gid(remote_gid(i));
      answer(sink.sent.back(), good_path(remote_gid(i), static_cast<std::uint16_t>(100 + i)));
      clock.advance(1ms);
    }
  }
};

}  // namespace ibat::core::testing
