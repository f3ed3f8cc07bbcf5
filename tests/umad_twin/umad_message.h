// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Test helper of the twin's MadLayer tests: a umad as libibumad writes it to the umad file, the
// kernel's ib_user_mad_hdr (agent, timeout, retries, destination LID 1 and QP 1) and then the MAD.
#pragma once

#include <arpa/inet.h>
#include <rdma/ib_user_mad.h>

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
  Bytes out(sizeof h);
  std::memcpy(out.data(), &h, sizeof h);
  out.insert(out.end(), mad.begin(), mad.end());
  return out;
}

}  // namespace ibat::umad_twin
