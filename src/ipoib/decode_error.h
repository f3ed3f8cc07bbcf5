// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Error value returned by the IPoIB decoders (ARP, pcap): a message naming what was wrong and where.
#pragma once

#include <string>

namespace ibat::ipoib {

struct DecodeError {
  std::string message;
};

}  // namespace ibat::ipoib
