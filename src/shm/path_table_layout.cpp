// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Key hashing and slot contents of the shared path table (see path_table_layout.h).
#include "shm/path_table_layout.h"

#include <cstring>

#include "mad/path_record.h"

namespace ibat::shm {

TableKey TableKey::of(const core::Gid& sgid, const core::Gid& dgid, core::Pkey pkey) {
  TableKey k{};
  std::memcpy(k.sgid, sgid.raw.data(), 16);
  std::memcpy(k.dgid, dgid.raw.data(), 16);
  k.pkey = pkey.value;
  return k;
}

core::Gid TableKey::source() const {
  core::Gid g;
  std::memcpy(g.raw.data(), sgid, 16);
  return g;
}

core::Gid TableKey::destination() const {
  core::Gid g;
  std::memcpy(g.raw.data(), dgid, 16);
  return g;
}

SlotPath make_slot_path(const core::PathRecord& p) {
  SlotPath out{};
  const PathFields f{p.dlid.value, p.slid.value, p.pkey.value, p.sl,       p.mtu,
                     p.rate,       p.pkt_life,   p.hop_limit,  p.tclass,   p.flow_label};
  std::memcpy(out.fields, &f, sizeof f);
  const auto record = mad::encode_path_record(p);
  static_assert(sizeof out.record == std::tuple_size_v<decltype(record)>);
  std::memcpy(out.record, record.data(), sizeof out.record);
  return out;
}

core::PathRecord SlotPath::decode() const {
  std::uint8_t bytes[kRecordBytes];
  std::memcpy(bytes, record, sizeof bytes);
  auto decoded = mad::decode_path_record(bytes);
  return decoded ? decoded.value() : core::PathRecord{};
}

}  // namespace ibat::shm
