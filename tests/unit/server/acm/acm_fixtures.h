// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Test helper: loads the golden ib_acme captures in data/ (see README.md) and builds ACM messages
// byte by byte from the acm.h layout, independently of the codec under test.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace ibat::acm::test {

inline std::vector<std::uint8_t> load_capture(const std::string& name) {
  std::ifstream in(std::string(IBAT_ACM_DATA_DIR) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string load_text(const std::string& name) {
  std::ifstream in(std::string(IBAT_ACM_DATA_DIR) + "/" + name);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Appends a value in host byte order (RESOLVE length, ep entry flags/type).
template <typename T>
void put_host(std::vector<std::uint8_t>& out, T v) {
  std::uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof v);
  out.insert(out.end(), b, b + sizeof b);
}

inline void put_be(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// A 16-byte header; `length_host_order` for RESOLVE.
inline std::vector<std::uint8_t> header(std::uint8_t opcode, std::uint8_t status, std::uint8_t d0, std::uint8_t d1,
                                        std::uint16_t length, bool length_host_order,
                                        std::uint64_t tid_bytes_be = 0) {
  std::vector<std::uint8_t> out = {1, opcode, status, d0, d1, 0};
  if (length_host_order)
    put_host<std::uint16_t>(out, length);
  else
    put_be(out, length, 2);
  put_be(out, tid_bytes_be, 8);
  return out;
}

// An acm_ep_addr_data entry: flags, type (host order), reserved, 64 info bytes.
inline void put_entry(std::vector<std::uint8_t>& out, std::uint32_t flags, std::uint16_t type,
                      const std::vector<std::uint8_t>& info) {
  put_host<std::uint32_t>(out, flags);
  put_host<std::uint16_t>(out, type);
  put_host<std::uint16_t>(out, 0);
  std::vector<std::uint8_t> padded = info;
  padded.resize(64, 0);
  out.insert(out.end(), padded.begin(), padded.end());
}

}  // namespace ibat::acm::test
