// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Test helper of the twin's MadLayer tests: a umad as libibumad writes it to the umad file, the
// kernel's ib_user_mad_hdr (agent, timeout, retries, destination LID 1 and QP 1) and then the MAD.
#pragma once

#include <arpa/inet.h>
#include <rdma/ib_user_mad.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "mad_layer.h"

namespace ibat::umad_twin {

inline Bytes umad(int agent, const Bytes& mad, std::uint32_t timeout_ms = 0, std::uint32_t retries = 0) {
  ib_user_mad_hdr h{};
  h.id = static_cast<std::uint32_t>(agent);
  h.timeout_ms = timeout_ms;
  h.retries = retries;
  h.lid = htons(1);
  h.qpn = htonl(1);
  // One buffer of the final size, both parts copied in: growing a 64-byte vector by insert() made
  // GCC 12 at -O2 see a copy past its end on the reallocation path (-Warray-bounds).
  Bytes out(sizeof h + mad.size());
  std::memcpy(out.data(), &h, sizeof h);
  std::copy(mad.begin(), mad.end(), out.begin() + static_cast<std::ptrdiff_t>(sizeof h));
  return out;
}

}  // namespace ibat::umad_twin
