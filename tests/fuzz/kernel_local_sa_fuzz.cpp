// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fuzzes the local SA datagram decoder: any bytes decode into messages or named problems, and the
// error reply to every answerable message decodes back as a non-request with the same id.
#include <cstdlib>

#include "kernel/local_sa_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ibat::kernel;
  for (const Message& message : decode_datagram({data, size})) {
    if (!message.answerable) continue;
    auto reply = decode_datagram(encode_error_reply(message.id, 0));
    if (reply.size() != 1 || reply[0].id.seq != message.id.seq || reply[0].id.type != message.id.type ||
        reply[0].answerable) {
      std::abort();
    }
  }
  return 0;
}
