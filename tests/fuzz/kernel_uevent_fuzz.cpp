// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fuzzes the kernel uevent decoder (HCAs coming and going): any bytes decode or are refused, never
// read out of bounds, and what decodes has the action its header names.
#include <cstdlib>

#include "kernel/device_events.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto event = ibat::kernel::parse_uevent({data, size});
  if (event && event->action.empty()) std::abort();
  return 0;
}
