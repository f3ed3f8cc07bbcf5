// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Encoding and decoding of the common MAD header.
#include "mad/mad_header.h"

#include "wire/byte_order.h"

namespace ibat::mad {

void encode_mad_header(const MadHeader& h, std::span<std::uint8_t, kMadHeaderSize> out) {
  wire::put8(out, 0, h.base_version);
  wire::put8(out, 1, h.mgmt_class);
  wire::put8(out, 2, h.class_version);
  wire::put8(out, 3, h.method);
  wire::put16(out, 4, h.status);
  wire::put16(out, 6, h.class_specific);
  wire::put64(out, 8, h.tid);
  wire::put16(out, 16, h.attr_id);
  wire::put16(out, 18, h.reserved);
  wire::put32(out, 20, h.attr_mod);
}

Result<MadHeader> decode_mad_header(std::span<const std::uint8_t> b) {
  if (b.size() < kMadHeaderSize) return too_short("MAD header", kMadHeaderSize, b.size());
  MadHeader h;
  h.base_version = b[0];
  h.mgmt_class = b[1];
  h.class_version = b[2];
  h.method = b[3];
  h.status = wire::get16(b, 4);
  h.class_specific = wire::get16(b, 6);
  h.tid = wire::get64(b, 8);
  h.attr_id = wire::get16(b, 16);
  h.reserved = wire::get16(b, 18);
  h.attr_mod = wire::get32(b, 20);
  return h;
}

}  // namespace ibat::mad
