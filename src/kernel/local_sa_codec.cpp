// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Decoding and encoding of the kernel's local SA netlink messages (local_sa_codec.h).
#include "kernel/local_sa_codec.h"

#include <algorithm>
#include <cstring>

#include <linux/netlink.h>
#include <rdma/ib_user_sa.h>
#include <rdma/rdma_netlink.h>

#include "mad/path_record.h"

namespace ibat::kernel {
namespace {

constexpr std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }
constexpr std::size_t kNlHeader = sizeof(nlmsghdr);
constexpr std::size_t kAttrHeader = sizeof(nlattr);
constexpr std::size_t kResolveHeader = align4(sizeof(rdma_ls_resolve_header));
constexpr std::size_t kPathRecData = sizeof(ib_path_rec_data);

template <class T>
T read_host(std::span<const std::uint8_t> bytes) {
  T value{};
  std::memcpy(&value, bytes.data(), sizeof(T));
  return value;
}

core::Gid read_gid(std::span<const std::uint8_t> bytes) {
  core::Gid gid;
  std::copy_n(bytes.begin(), gid.raw.size(), gid.raw.begin());
  return gid;
}

// The payload size each known attribute must have (0: unknown type).
std::size_t attribute_size(std::uint16_t type) {
  switch (type) {
    case LS_NLA_TYPE_PATH_RECORD: return kPathRecData;
    case LS_NLA_TYPE_TIMEOUT: return 4;
    case LS_NLA_TYPE_SERVICE_ID: return 8;
    case LS_NLA_TYPE_DGID:
    case LS_NLA_TYPE_SGID:
    case LS_NLA_TYPE_IPV6: return 16;
    case LS_NLA_TYPE_TCLASS: return 1;
    case LS_NLA_TYPE_PKEY:
    case LS_NLA_TYPE_QOS_CLASS: return 2;
    case LS_NLA_TYPE_IPV4: return 4;
    default: return 0;
  }
}

// Reads the attributes of a RESOLVE request into `query`; nullopt when they are all sound.
std::optional<Problem> read_attributes(std::span<const std::uint8_t> attrs, ResolveQuery& query) {
  while (attrs.size() >= kAttrHeader) {
    const auto header = read_host<nlattr>(attrs);
    if (header.nla_len < kAttrHeader || header.nla_len > attrs.size()) return Problem::bad_attribute;
    const bool mandatory = (header.nla_type & RDMA_NLA_F_MANDATORY) != 0;
    const auto type = static_cast<std::uint16_t>(header.nla_type & RDMA_NLA_TYPE_MASK);
    const auto payload = attrs.subspan(kAttrHeader, header.nla_len - kAttrHeader);
    const std::size_t want = attribute_size(type);
    if (want == 0) {
      if (mandatory) return Problem::unknown_mandatory;
    } else if (payload.size() != want) {
      return Problem::bad_attribute;
    } else {
      switch (type) {
        case LS_NLA_TYPE_SERVICE_ID: query.service_id = read_host<std::uint64_t>(payload); break;
        case LS_NLA_TYPE_DGID: query.dgid = read_gid(payload); break;
        case LS_NLA_TYPE_SGID: query.sgid = read_gid(payload); break;
        case LS_NLA_TYPE_TCLASS: query.tclass = payload[0]; break;
        case LS_NLA_TYPE_PKEY: query.pkey = core::Pkey{read_host<std::uint16_t>(payload)}; break;
        case LS_NLA_TYPE_QOS_CLASS: query.qos_class = read_host<std::uint16_t>(payload); break;
        default: break;  // TIMEOUT, PATH_RECORD, IPV4/6: not part of a RESOLVE request
      }
    }
    attrs = attrs.subspan(std::min(align4(header.nla_len), attrs.size()));
  }
  return std::nullopt;
}

std::variant<ResolveQuery, Problem> decode_resolve(std::span<const std::uint8_t> payload) {
  if (payload.size() < sizeof(rdma_ls_resolve_header)) return Problem::truncated;
  const auto header = read_host<rdma_ls_resolve_header>(payload);
  ResolveQuery query;
  const auto* name = reinterpret_cast<const char*>(header.device_name);
  query.device.assign(name, strnlen(name, sizeof(header.device_name)));
  query.port_num = header.port_num;
  if (header.path_use >= LS_RESOLVE_PATH_USE_MAX) return Problem::bad_path_use;
  query.path_use = static_cast<PathUse>(header.path_use);
  const auto attrs = payload.subspan(std::min(kResolveHeader, payload.size()));
  if (auto problem = read_attributes(attrs, query)) return *problem;
  if (!query.dgid) return Problem::no_dgid;
  return query;
}

Message decode_message(const nlmsghdr& header, std::span<const std::uint8_t> payload) {
  Message message;
  message.id = {header.nlmsg_type, header.nlmsg_seq};
  if ((header.nlmsg_flags & NLM_F_REQUEST) == 0) {
    message.answerable = false;
    message.content = Problem::not_a_request;
  } else if (RDMA_NL_GET_CLIENT(header.nlmsg_type) != RDMA_NL_LS) {
    message.content = Problem::not_local_sa;
  } else if (RDMA_NL_GET_OP(header.nlmsg_type) != RDMA_NL_LS_OP_RESOLVE) {
    message.content = Problem::unsupported_op;
  } else {
    message.content = decode_resolve(payload);
  }
  return message;
}

std::vector<std::uint8_t> encode(const MessageId& id, std::uint32_t port_id, std::uint16_t flags,
                                 std::span<const std::uint8_t> attributes) {
  std::vector<std::uint8_t> out(kNlHeader + attributes.size());
  nlmsghdr header{};
  header.nlmsg_len = static_cast<std::uint32_t>(out.size());
  header.nlmsg_type = id.type;
  header.nlmsg_flags = flags;
  header.nlmsg_seq = id.seq;
  header.nlmsg_pid = port_id;
  std::memcpy(out.data(), &header, sizeof(header));
  std::copy(attributes.begin(), attributes.end(), out.begin() + kNlHeader);
  return out;
}

}  // namespace

std::string_view to_string(PathUse use) {
  switch (use) {
    case PathUse::all: return "all";
    case PathUse::unidirectional: return "unidirectional";
    case PathUse::gmp: return "gmp";
  }
  return "?";
}

std::string_view to_string(Problem problem) {
  switch (problem) {
    case Problem::truncated: return "truncated";
    case Problem::not_a_request: return "not_a_request";
    case Problem::not_local_sa: return "not_local_sa";
    case Problem::unsupported_op: return "unsupported_op";
    case Problem::bad_attribute: return "bad_attribute";
    case Problem::unknown_mandatory: return "unknown_mandatory_attribute";
    case Problem::bad_path_use: return "bad_path_use";
    case Problem::no_dgid: return "no_dgid";
  }
  return "?";
}

std::vector<Message> decode_datagram(std::span<const std::uint8_t> bytes) {
  std::vector<Message> messages;
  while (!bytes.empty()) {
    if (bytes.size() < kNlHeader) {
      messages.push_back({{}, false, Problem::truncated});
      break;
    }
    const auto header = read_host<nlmsghdr>(bytes);
    if (header.nlmsg_len < kNlHeader || header.nlmsg_len > bytes.size()) {
      messages.push_back({{header.nlmsg_type, header.nlmsg_seq}, false, Problem::truncated});
      break;
    }
    messages.push_back(decode_message(header, bytes.subspan(kNlHeader, header.nlmsg_len - kNlHeader)));
    bytes = bytes.subspan(std::min(align4(header.nlmsg_len), bytes.size()));
  }
  return messages;
}

std::uint32_t reply_path_flags(PathUse use) {
  if (use == PathUse::unidirectional) return IB_PATH_PRIMARY | IB_PATH_OUTBOUND;
  return IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL;
}

bool path_fits(PathUse use, const core::PathRecord& path) {
  return path.is_servable() && (use == PathUse::unidirectional || path.reversible);
}

std::vector<std::uint8_t> encode_path_reply(const MessageId& id, std::uint32_t port_id, PathUse use,
                                            const core::PathRecord& path) {
  std::array<std::uint8_t, kAttrHeader + kPathRecData> attribute{};
  const nlattr header{static_cast<std::uint16_t>(attribute.size()), LS_NLA_TYPE_PATH_RECORD};
  std::memcpy(attribute.data(), &header, sizeof(header));
  ib_path_rec_data data{};
  data.flags = reply_path_flags(use);
  const auto wire = mad::encode_path_record(path);
  static_assert(sizeof(data.path_rec) == wire.size());
  std::memcpy(data.path_rec, wire.data(), wire.size());
  std::memcpy(attribute.data() + kAttrHeader, &data, sizeof(data));
  return encode(id, port_id, 0, attribute);
}

std::vector<std::uint8_t> encode_error_reply(const MessageId& id, std::uint32_t port_id) {
  return encode(id, port_id, RDMA_NL_LS_F_ERR, {});
}

}  // namespace ibat::kernel
