// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Parsing, formatting and validation of the value types in types.h.
#include "core/types.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstdio>

namespace ibat::core {
namespace {

std::optional<std::uint64_t> parse_uint(std::string_view text, std::uint64_t max) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty()) return std::nullopt;
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc{} || ptr != text.data() + text.size() || v > max) return std::nullopt;
  return v;
}

std::uint64_t load_be64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

void store_be64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<std::uint8_t>(v & 0xFF);
    v >>= 8;
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<Gid> Gid::parse(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  char buf[INET6_ADDRSTRLEN];
  text.copy(buf, text.size());
  buf[text.size()] = '\0';
  Gid g;
  if (inet_pton(AF_INET6, buf, g.raw.data()) != 1) return std::nullopt;
  return g;
}

Gid Gid::from_parts(std::uint64_t subnet_prefix, std::uint64_t interface_id) {
  Gid g;
  store_be64(g.raw.data(), subnet_prefix);
  store_be64(g.raw.data() + 8, interface_id);
  return g;
}

std::string Gid::to_string() const {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, raw.data(), buf, sizeof buf);
  return buf;
}

std::uint64_t Gid::subnet_prefix() const { return load_be64(raw.data()); }
std::uint64_t Gid::interface_id() const { return load_be64(raw.data() + 8); }
bool Gid::is_zero() const { return *this == Gid{}; }

std::optional<Lid> Lid::parse(std::string_view text) {
  auto v = parse_uint(text, 0xFFFF);
  if (!v) return std::nullopt;
  return Lid{static_cast<std::uint16_t>(*v)};
}

std::optional<Pkey> Pkey::parse(std::string_view text) {
  auto v = parse_uint(text, 0xFFFF);
  if (!v) return std::nullopt;
  return Pkey{static_cast<std::uint16_t>(*v)};
}

std::string Pkey::to_string() const {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", value);
  return buf;
}

std::optional<HwAddr> HwAddr::parse(std::string_view text) {
  HwAddr hw;
  std::size_t pos = 0;
  for (std::size_t i = 0; i < hw.raw.size(); ++i) {
    if (i > 0) {
      if (pos >= text.size() || text[pos] != ':') return std::nullopt;
      ++pos;
    }
    if (pos + 2 > text.size()) return std::nullopt;
    int hi = hex_digit(text[pos]), lo = hex_digit(text[pos + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    hw.raw[i] = static_cast<std::uint8_t>(hi * 16 + lo);
    pos += 2;
  }
  if (pos != text.size()) return std::nullopt;
  return hw;
}

HwAddr HwAddr::from(std::uint32_t qpn, const Gid& gid, std::uint8_t flags) {
  HwAddr hw;
  hw.raw[0] = flags;
  hw.raw[1] = static_cast<std::uint8_t>((qpn >> 16) & 0xFF);
  hw.raw[2] = static_cast<std::uint8_t>((qpn >> 8) & 0xFF);
  hw.raw[3] = static_cast<std::uint8_t>(qpn & 0xFF);
  for (std::size_t i = 0; i < 16; ++i) hw.raw[4 + i] = gid.raw[i];
  return hw;
}

std::string HwAddr::to_string() const {
  std::string out;
  out.reserve(raw.size() * 3);
  static constexpr char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (i) out.push_back(':');
    out.push_back(digits[raw[i] >> 4]);
    out.push_back(digits[raw[i] & 0xF]);
  }
  return out;
}

std::uint32_t HwAddr::qpn() const {
  return (std::uint32_t{raw[1]} << 16) | (std::uint32_t{raw[2]} << 8) | raw[3];
}

Gid HwAddr::gid() const {
  Gid g;
  for (std::size_t i = 0; i < 16; ++i) g.raw[i] = raw[4 + i];
  return g;
}

std::optional<IpAddr> IpAddr::parse(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  char buf[INET6_ADDRSTRLEN];
  text.copy(buf, text.size());
  buf[text.size()] = '\0';
  IpAddr ip;
  std::uint8_t v4[4];
  if (inet_pton(AF_INET, buf, v4) == 1) {
    ip.v4 = true;
    ip.raw[10] = ip.raw[11] = 0xFF;
    for (int i = 0; i < 4; ++i) ip.raw[12 + i] = v4[i];
    return ip;
  }
  if (inet_pton(AF_INET6, buf, ip.raw.data()) == 1) return ip;
  return std::nullopt;
}

IpAddr IpAddr::from_v4(std::uint32_t host_order) {
  IpAddr ip;
  ip.v4 = true;
  ip.raw[10] = ip.raw[11] = 0xFF;
  for (int i = 0; i < 4; ++i) ip.raw[12 + i] = static_cast<std::uint8_t>(host_order >> (24 - 8 * i));
  return ip;
}

std::string IpAddr::to_string() const {
  char buf[INET6_ADDRSTRLEN];
  if (v4)
    inet_ntop(AF_INET, raw.data() + 12, buf, sizeof buf);
  else
    inet_ntop(AF_INET6, raw.data(), buf, sizeof buf);
  return buf;
}

std::optional<std::uint32_t> mtu_bytes(std::uint8_t code) {
  if (code < 1 || code > 5) return std::nullopt;
  return 128u << code;
}

std::optional<double> rate_gbps(std::uint8_t code) {
  switch (code) {
    case 2: return 2.5;
    case 3: return 10;
    case 4: return 30;
    case 5: return 5;
    case 6: return 20;
    case 7: return 40;
    case 8: return 60;
    case 9: return 80;
    case 10: return 120;
    case 11: return 14;
    case 12: return 56;
    case 13: return 112;
    case 14: return 168;
    case 15: return 25;
    case 16: return 100;
    case 17: return 200;
    case 18: return 300;
    case 19: return 28;
    case 20: return 50;
    case 21: return 400;
    case 22: return 600;
    default: return std::nullopt;
  }
}

bool PathRecord::is_servable() const {
  return dlid.is_valid_unicast() && slid.is_valid_unicast() && mtu_bytes(mtu).has_value() &&
         rate_gbps(rate).has_value() && !dgid.is_zero() && pkey.is_valid();
}

std::string_view to_string(Error e) {
  switch (e) {
    case Error::ok: return "ok";
    case Error::timeout: return "timeout";
    case Error::unreachable: return "unreachable";
    case Error::no_record: return "no-record";
    case Error::overloaded: return "overloaded";
    case Error::cancelled: return "cancelled";
    case Error::invalid: return "invalid";
  }
  return "unknown";
}

std::optional<Error> error_from_string(std::string_view s) {
  for (auto e : {Error::ok, Error::timeout, Error::unreachable, Error::no_record, Error::overloaded,
                 Error::cancelled, Error::invalid})
    if (to_string(e) == s) return e;
  return std::nullopt;
}

}  // namespace ibat::core

std::size_t std::hash<ibat::core::Gid>::operator()(const ibat::core::Gid& g) const noexcept {
  std::uint64_t a = g.subnet_prefix(), b = g.interface_id();
  std::uint64_t h = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x7F4A7C159E3779B9ULL + (a << 6) + (a >> 2));
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 29;
  return static_cast<std::size_t>(h);
}
