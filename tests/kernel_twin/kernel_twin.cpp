// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel twin's request builder and reply judge (kernel_twin.h).
#include "kernel_twin.h"

#include <cstring>

#include <linux/netlink.h>
#include <rdma/ib_user_sa.h>
#include <rdma/rdma_netlink.h>

#include "mad/path_record.h"

namespace ibat::twin {
namespace {

constexpr std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

void put_attribute(std::vector<std::uint8_t>& out, std::uint16_t type, const void* data, std::size_t size) {
  const nlattr header{static_cast<std::uint16_t>(sizeof(nlattr) + size),
                      static_cast<std::uint16_t>(RDMA_NLA_F_MANDATORY | type)};
  const std::size_t at = out.size();
  out.resize(at + align4(header.nla_len), 0);
  std::memcpy(out.data() + at, &header, sizeof(header));
  std::memcpy(out.data() + at + sizeof(header), data, size);
}

// The kernel's ib_nl_policy: the largest payload each attribute may have (0: not in the policy).
std::size_t policy_max(std::uint16_t type) {
  switch (type) {
    case LS_NLA_TYPE_PATH_RECORD: return sizeof(ib_path_rec_data);
    case LS_NLA_TYPE_TIMEOUT: return 4;
    case LS_NLA_TYPE_SERVICE_ID: return 8;
    case LS_NLA_TYPE_DGID:
    case LS_NLA_TYPE_SGID: return 16;
    case LS_NLA_TYPE_TCLASS: return 1;
    case LS_NLA_TYPE_PKEY:
    case LS_NLA_TYPE_QOS_CLASS: return 2;
    default: return 0;
  }
}

std::uint32_t mask_of(std::uint8_t path_use) {
  switch (path_use) {
    case LS_RESOLVE_PATH_USE_UNIDIRECTIONAL: return IB_PATH_PRIMARY | IB_PATH_OUTBOUND;
    case LS_RESOLVE_PATH_USE_ALL: return IB_PATH_PRIMARY;
    default: return IB_PATH_PRIMARY | IB_PATH_GMP | IB_PATH_BIDIRECTIONAL;
  }
}

}  // namespace

std::string_view to_string(Caller caller) {
  switch (caller) {
    case Caller::ipoib: return "ipoib";
    case Caller::rdma_cm: return "rdma_cm";
    case Caller::srp: return "srp";
  }
  return "?";
}

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::path: return "path";
    case Outcome::fallback: return "fallback";
    case Outcome::eio: return "eio";
    case Outcome::ignored: return "ignored";
  }
  return "?";
}

std::uint8_t path_use_of(Caller caller) {
  return caller == Caller::rdma_cm ? LS_RESOLVE_PATH_USE_ALL : LS_RESOLVE_PATH_USE_UNIDIRECTIONAL;
}

std::vector<std::uint8_t> build_resolve(const KernelQuery& q, std::uint32_t seq, std::string_view device,
                                        std::uint8_t port) {
  std::vector<std::uint8_t> out(sizeof(nlmsghdr) + align4(sizeof(rdma_ls_resolve_header)), 0);
  rdma_ls_resolve_header header{};
  std::memcpy(header.device_name, device.data(), std::min(device.size(), sizeof(header.device_name)));
  header.port_num = port;
  header.path_use = path_use_of(q.caller);
  std::memcpy(out.data() + sizeof(nlmsghdr), &header, sizeof(header));

  // Attributes in the order ib_nl_set_path_rec_attrs() writes them.
  const bool service_id = q.caller != Caller::ipoib;
  const bool tclass = q.caller == Caller::ipoib || (q.caller == Caller::rdma_cm && !q.qos_class);
  const bool qos_class = q.caller == Caller::rdma_cm && q.qos_class.has_value();
  if (service_id) put_attribute(out, LS_NLA_TYPE_SERVICE_ID, &q.service_id, sizeof(q.service_id));
  put_attribute(out, LS_NLA_TYPE_DGID, q.dgid.raw.data(), q.dgid.raw.size());
  put_attribute(out, LS_NLA_TYPE_SGID, q.sgid.raw.data(), q.sgid.raw.size());
  if (tclass) put_attribute(out, LS_NLA_TYPE_TCLASS, &q.tclass, sizeof(q.tclass));
  const std::uint16_t pkey = q.pkey.value;
  put_attribute(out, LS_NLA_TYPE_PKEY, &pkey, sizeof(pkey));
  if (qos_class) put_attribute(out, LS_NLA_TYPE_QOS_CLASS, &*q.qos_class, sizeof(*q.qos_class));

  nlmsghdr nl{};
  nl.nlmsg_len = static_cast<std::uint32_t>(out.size());
  nl.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_LS, RDMA_NL_LS_OP_RESOLVE);
  nl.nlmsg_flags = NLM_F_REQUEST;
  nl.nlmsg_seq = seq;
  std::memcpy(out.data(), &nl, sizeof(nl));
  return out;
}

Verdict judge(std::span<const std::uint8_t> reply, std::uint32_t seq, std::uint8_t path_use) {
  Verdict v;
  nlmsghdr nl{};
  if (reply.size() < sizeof(nl)) return {Outcome::ignored, {}, 0, "shorter than a netlink header"};
  std::memcpy(&nl, reply.data(), sizeof(nl));
  if (nl.nlmsg_len < sizeof(nl) || nl.nlmsg_len > reply.size())
    return {Outcome::ignored, {}, 0, "nlmsg_len does not match the datagram"};
  if (nl.nlmsg_type != RDMA_NL_GET_TYPE(RDMA_NL_LS, RDMA_NL_LS_OP_RESOLVE))
    return {Outcome::ignored, {}, 0, "not a local SA RESOLVE message"};
  if (nl.nlmsg_seq != seq) return {Outcome::ignored, {}, 0, "sequence number of no pending request"};
  if (nl.nlmsg_flags & RDMA_NL_LS_F_ERR) return {Outcome::fallback, {}, 0, "RDMA_NL_LS_F_ERR"};

  auto attrs = reply.subspan(sizeof(nl), nl.nlmsg_len - sizeof(nl));
  std::vector<std::span<const std::uint8_t>> records;
  while (attrs.size() >= sizeof(nlattr)) {
    nlattr a{};
    std::memcpy(&a, attrs.data(), sizeof(a));
    if (a.nla_len < sizeof(a) || a.nla_len > attrs.size())
      return {Outcome::fallback, {}, 0, "attribute length runs past the message (nla_parse fails)"};
    const auto type = static_cast<std::uint16_t>(a.nla_type & NLA_TYPE_MASK);
    const auto payload = attrs.subspan(sizeof(a), a.nla_len - sizeof(a));
    const std::size_t max = policy_max(type);
    if (max != 0 && payload.size() > max)
      return {Outcome::fallback, {}, 0, "attribute longer than the kernel's policy allows"};
    if (type == LS_NLA_TYPE_PATH_RECORD) records.push_back(payload);
    attrs = attrs.subspan(std::min(align4(a.nla_len), attrs.size()));
  }
  const std::uint32_t mask = mask_of(path_use);
  for (const auto& record : records) {
    if (record.size() < sizeof(ib_path_rec_data)) continue;  // the kernel would read past it; count as no match
    ib_path_rec_data data{};
    std::memcpy(&data, record.data(), sizeof(data));
    if ((data.flags & mask) != mask) continue;
    auto path = mad::decode_path_record(std::span(reinterpret_cast<const std::uint8_t*>(data.path_rec),
                                                  sizeof(data.path_rec)));
    if (!path) continue;
    if (v.paths.empty()) v.first_flags = data.flags;
    v.paths.push_back(*path);
    if (v.paths.size() == 3) break;
  }
  if (v.paths.empty()) return {Outcome::eio, {}, 0, "good reply without a record matching the path_use mask"};
  v.outcome = Outcome::path;
  return v;
}

}  // namespace ibat::twin
