// Key hashing and path packing of the shared path table (see path_table_layout.h).
#include "shm/path_table_layout.h"

#include <cstring>

namespace ibat::shm {

TableKey TableKey::of(const core::Gid& sgid, const core::Gid& dgid, core::Pkey pkey) {
  TableKey k{};
  std::memcpy(k.sgid, sgid.raw.data(), 16);
  std::memcpy(k.dgid, dgid.raw.data(), 16);
  k.pkey = pkey.value;
  return k;
}

std::uint64_t hash_key(const TableKey& key) {
  std::uint64_t h = key.dgid[1] * 0x9E3779B97F4A7C15ULL;
  h ^= (key.dgid[0] + key.pkey) * 0xC2B2AE3D27D4EB4FULL;
  h ^= (key.sgid[1] ^ (key.sgid[0] << 1)) * 0x165667B19E3779F9ULL;
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ULL;
  h ^= h >> 32;
  return h;
}

namespace {

std::uint64_t bits(std::uint64_t value, unsigned width, unsigned shift) {
  return (value & ((1ULL << width) - 1)) << shift;
}
template <class T>
T field(std::uint64_t word, unsigned width, unsigned shift) {
  return static_cast<T>((word >> shift) & ((1ULL << width) - 1));
}

}  // namespace

PackedPath pack_path(const core::PathRecord& p) {
  PackedPath out{};
  out.w[0] = p.service_id;
  out.w[1] = bits(p.dlid.value, 16, 0) | bits(p.slid.value, 16, 16) | bits(p.flow_label, 20, 32) |
             bits(p.hop_limit, 8, 52) | bits(p.raw_traffic, 1, 60) | bits(p.reversible, 1, 61);
  out.w[2] = bits(p.tclass, 8, 0) | bits(p.numb_path, 7, 8) | bits(p.qos_class, 12, 16) | bits(p.sl, 4, 28) |
             bits(p.mtu_selector, 2, 32) | bits(p.mtu, 6, 34) | bits(p.rate_selector, 2, 40) |
             bits(p.rate, 6, 42) | bits(p.pkt_life_selector, 2, 48) | bits(p.pkt_life, 6, 50) |
             bits(p.preference, 8, 56);
  return out;
}

core::PathRecord unpack_path(const PackedPath& packed, const TableKey& key) {
  core::PathRecord p;
  std::memcpy(p.sgid.raw.data(), key.sgid, 16);
  std::memcpy(p.dgid.raw.data(), key.dgid, 16);
  p.pkey.value = key.pkey;
  p.service_id = packed.w[0];
  const std::uint64_t a = packed.w[1], b = packed.w[2];
  p.dlid.value = field<std::uint16_t>(a, 16, 0);
  p.slid.value = field<std::uint16_t>(a, 16, 16);
  p.flow_label = field<std::uint32_t>(a, 20, 32);
  p.hop_limit = field<std::uint8_t>(a, 8, 52);
  p.raw_traffic = field<bool>(a, 1, 60);
  p.reversible = field<bool>(a, 1, 61);
  p.tclass = field<std::uint8_t>(b, 8, 0);
  p.numb_path = field<std::uint8_t>(b, 7, 8);
  p.qos_class = field<std::uint16_t>(b, 12, 16);
  p.sl = field<std::uint8_t>(b, 4, 28);
  p.mtu_selector = field<std::uint8_t>(b, 2, 32);
  p.mtu = field<std::uint8_t>(b, 6, 34);
  p.rate_selector = field<std::uint8_t>(b, 2, 40);
  p.rate = field<std::uint8_t>(b, 6, 42);
  p.pkt_life_selector = field<std::uint8_t>(b, 2, 48);
  p.pkt_life = field<std::uint8_t>(b, 6, 50);
  p.preference = field<std::uint8_t>(b, 8, 56);
  return p;
}

}  // namespace ibat::shm
