// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fuzzes the rtnetlink neighbour decoder: any bytes decode or are refused, never read out of bounds.
#include <cstdlib>

#include "kernel/neighbour_message.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto message = ibat::kernel::decode_neighbour({data, size});
  if (message && message->ipoib_hw && message->ipoib_hw->raw.size() != 20) std::abort();
  return 0;
}
