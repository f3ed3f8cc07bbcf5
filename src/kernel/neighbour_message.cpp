// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// rtnetlink neighbour message decoding (neighbour_message.h).
#include "kernel/neighbour_message.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

namespace ibat::kernel {
namespace {

constexpr std::size_t kIpoibHwLength = 20;  // INFINIBAND_ALEN

struct Attributes {
  const nlattr* dst = nullptr;
  const nlattr* lladdr = nullptr;
};

int keep_attribute(const nlattr* attr, void* data) {
  if (mnl_attr_type_valid(attr, NDA_MAX) < 0) return MNL_CB_OK;  // newer attributes: not ours
  auto* attrs = static_cast<Attributes*>(data);
  switch (mnl_attr_get_type(attr)) {
    case NDA_DST: attrs->dst = attr; break;
    case NDA_LLADDR: attrs->lladdr = attr; break;
    default: break;
  }
  return MNL_CB_OK;
}

NeighbourMessage::Kind kind_of(std::uint16_t type, std::uint16_t state) {
  if (type == RTM_DELNEIGH || (state & NUD_FAILED)) return NeighbourMessage::Kind::remove;
  if (state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT)) {
    return NeighbourMessage::Kind::update;
  }
  return NeighbourMessage::Kind::ignore;
}

}  // namespace

std::optional<NeighbourMessage> decode_neighbour(std::span<const std::uint8_t> message) {
  if (message.size() < sizeof(nlmsghdr) + sizeof(ndmsg)) return std::nullopt;
  // libmnl reads the header in place: copy into an aligned buffer of the message's own length.
  nlmsghdr header{};
  std::memcpy(&header, message.data(), sizeof(header));
  if (header.nlmsg_len < sizeof(nlmsghdr) + sizeof(ndmsg) || header.nlmsg_len > message.size()) return std::nullopt;
  if (header.nlmsg_type != RTM_NEWNEIGH && header.nlmsg_type != RTM_DELNEIGH) return std::nullopt;
  std::vector<std::uint32_t> aligned((header.nlmsg_len + 3) / 4);
  std::memcpy(aligned.data(), message.data(), header.nlmsg_len);
  const auto* nlh = reinterpret_cast<const nlmsghdr*>(aligned.data());
  const auto* nd = static_cast<const ndmsg*>(mnl_nlmsg_get_payload(nlh));
  if (nd->ndm_family != AF_INET && nd->ndm_family != AF_INET6) return std::nullopt;

  Attributes attrs;
  if (mnl_attr_parse(nlh, sizeof(ndmsg), keep_attribute, &attrs) < 0) return std::nullopt;
  const std::size_t ip_length = nd->ndm_family == AF_INET ? 4 : 16;
  if (attrs.dst == nullptr || mnl_attr_get_payload_len(attrs.dst) != ip_length) return std::nullopt;

  NeighbourMessage out;
  out.ifindex = nd->ndm_ifindex;
  out.state = nd->ndm_state;
  out.kind = kind_of(header.nlmsg_type, nd->ndm_state);
  const auto* dst = static_cast<const std::uint8_t*>(mnl_attr_get_payload(attrs.dst));
  out.ip.v4 = ip_length == 4;
  if (out.ip.v4) {
    out.ip.raw[10] = out.ip.raw[11] = 0xFF;
    std::copy_n(dst, 4, out.ip.raw.begin() + 12);
  } else {
    std::copy_n(dst, 16, out.ip.raw.begin());
  }
  if (attrs.lladdr != nullptr && mnl_attr_get_payload_len(attrs.lladdr) == kIpoibHwLength) {
    core::HwAddr hw;
    std::copy_n(static_cast<const std::uint8_t*>(mnl_attr_get_payload(attrs.lladdr)), kIpoibHwLength, hw.raw.begin());
    out.ipoib_hw = hw;
  }
  return out;
}

}  // namespace ibat::kernel
