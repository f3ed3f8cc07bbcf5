// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The local SA codec against the kernel twin: every request the kernel builds decodes to what it
// asked, every malformed one is named, and every reply is judged by the kernel's own rules.
#include "kernel/local_sa_codec.h"

#include <cstring>

#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <rdma/ib_user_sa.h>
#include <rdma/rdma_netlink.h>

#include "kernel_twin.h"

namespace ibat::kernel {
namespace {

const core::Gid kSgid = core::Gid::from_parts(0xfe80000000000000ULL, 0x1);
const core::Gid kDgid = core::Gid::from_parts(0xfe80000000000000ULL, 0x22);

core::PathRecord path(bool reversible = true) {
  core::PathRecord p;
  p.sgid = kSgid;
  p.dgid = kDgid;
  p.slid = core::Lid{1};
  p.dlid = core::Lid{34};
  p.mtu = 5;
  p.rate = 16;
  p.sl = 3;
  p.reversible = reversible;
  p.numb_path = 1;
  return p;
}

twin::KernelQuery query(twin::Caller caller) {
  twin::KernelQuery q;
  q.caller = caller;
  q.sgid = kSgid;
  q.dgid = kDgid;
  q.pkey = core::Pkey{0x8001};
  q.tclass = 7;
  q.service_id = 0x1000000000000abcULL;
  return q;
}

ResolveQuery single_query(const std::vector<Message>& messages) {
  EXPECT_EQ(messages.size(), 1u);
  if (messages.size() != 1) return {};
  const auto* q = std::get_if<ResolveQuery>(&messages[0].content);
  EXPECT_NE(q, nullptr) << to_string(std::get<Problem>(messages[0].content));
  return q ? *q : ResolveQuery{};
}

Problem single_problem(std::span<const std::uint8_t> bytes) {
  auto messages = decode_datagram(bytes);
  EXPECT_EQ(messages.size(), 1u);
  const auto* p = messages.empty() ? nullptr : std::get_if<Problem>(&messages[0].content);
  EXPECT_NE(p, nullptr);
  return p ? *p : Problem::truncated;
}

void set_type(std::vector<std::uint8_t>& message, std::uint16_t type) {
  std::memcpy(message.data() + offsetof(nlmsghdr, nlmsg_type), &type, sizeof(type));
}

TEST(LocalSaCodec, IpoibRequestDecodesAsUnidirectionalWithTclassAndPkey) {
  auto bytes = twin::build_resolve(query(twin::Caller::ipoib), 41, "mlx5_3", 2);
  const auto messages = decode_datagram(bytes);
  const ResolveQuery q = single_query(messages);
  EXPECT_EQ(messages[0].id.seq, 41u);
  EXPECT_EQ(q.device, "mlx5_3");
  EXPECT_EQ(q.port_num, 2);
  EXPECT_EQ(q.path_use, PathUse::unidirectional);
  EXPECT_EQ(q.dgid, kDgid);
  EXPECT_EQ(q.sgid, kSgid);
  EXPECT_EQ(q.tclass, 7);
  EXPECT_EQ(q.pkey, core::Pkey{0x8001});
  EXPECT_FALSE(q.service_id);
  EXPECT_FALSE(q.qos_class);
}

TEST(LocalSaCodec, RdmaCmRequestCarriesServiceIdAndQosClassAndAsksForAll) {
  auto kq = query(twin::Caller::rdma_cm);
  kq.qos_class = 0x123;
  auto bytes = twin::build_resolve(kq, 1);
  const ResolveQuery q = single_query(decode_datagram(bytes));
  EXPECT_EQ(q.path_use, PathUse::all);
  EXPECT_EQ(q.service_id, 0x1000000000000abcULL);
  EXPECT_EQ(q.qos_class, 0x123);
  EXPECT_FALSE(q.tclass);  // rdma_cm sends QOS_CLASS or TCLASS, not both
}

TEST(LocalSaCodec, SrpRequestIsUnidirectionalWithServiceId) {
  auto bytes = twin::build_resolve(query(twin::Caller::srp), 1);
  const ResolveQuery q = single_query(decode_datagram(bytes));
  EXPECT_EQ(q.path_use, PathUse::unidirectional);
  EXPECT_EQ(q.service_id, 0x1000000000000abcULL);
  EXPECT_FALSE(q.tclass);
}

TEST(LocalSaCodec, TwoMessagesInOneDatagramAreBothDecoded) {
  auto bytes = twin::build_resolve(query(twin::Caller::ipoib), 1);
  auto second = twin::build_resolve(query(twin::Caller::srp), 2);
  bytes.insert(bytes.end(), second.begin(), second.end());
  const auto messages = decode_datagram(bytes);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1].id.seq, 2u);
}

TEST(LocalSaCodec, BrokenHeadersAreTruncatedAndNotAnswerable) {
  auto bytes = twin::build_resolve(query(twin::Caller::ipoib), 1);
  for (std::size_t cut : {std::size_t{0} + 1, sizeof(nlmsghdr) - 1, bytes.size() - 1}) {
    auto messages = decode_datagram(std::span(bytes.data(), cut));
    ASSERT_EQ(messages.size(), 1u) << cut;
    EXPECT_FALSE(messages[0].answerable) << cut;
    EXPECT_EQ(std::get<Problem>(messages[0].content), Problem::truncated) << cut;
  }
}

TEST(LocalSaCodec, ResolveHeaderCutShortIsTruncatedButAnswerable) {
  auto bytes = twin::build_resolve(query(twin::Caller::ipoib), 1);
  bytes.resize(sizeof(nlmsghdr) + 10);
  const std::uint32_t len = static_cast<std::uint32_t>(bytes.size());
  std::memcpy(bytes.data(), &len, sizeof(len));
  auto messages = decode_datagram(bytes);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_TRUE(messages[0].answerable);
  EXPECT_EQ(std::get<Problem>(messages[0].content), Problem::truncated);
}

TEST(LocalSaCodec, OtherOpsClientsAndNonRequestsAreNamed) {
  auto bytes = twin::build_resolve(query(twin::Caller::ipoib), 1);
  set_type(bytes, RDMA_NL_GET_TYPE(RDMA_NL_LS, RDMA_NL_LS_OP_IP_RESOLVE));
  EXPECT_EQ(single_problem(bytes), Problem::unsupported_op);
  set_type(bytes, RDMA_NL_GET_TYPE(RDMA_NL_LS, RDMA_NL_LS_OP_SET_TIMEOUT));
  EXPECT_EQ(single_problem(bytes), Problem::unsupported_op);
  set_type(bytes, RDMA_NL_GET_TYPE(RDMA_NL_IWCM, 0));
  EXPECT_EQ(single_problem(bytes), Problem::not_local_sa);

  auto reply = twin::build_resolve(query(twin::Caller::ipoib), 1);
  const std::uint16_t no_flags = 0;
  std::memcpy(reply.data() + offsetof(nlmsghdr, nlmsg_flags), &no_flags, sizeof(no_flags));
  auto messages = decode_datagram(reply);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_FALSE(messages[0].answerable);
  EXPECT_EQ(std::get<Problem>(messages[0].content), Problem::not_a_request);
}

// Appends one attribute to a request and fixes nlmsg_len.
void append_attribute(std::vector<std::uint8_t>& bytes, std::uint16_t type, std::vector<std::uint8_t> payload) {
  const nlattr a{static_cast<std::uint16_t>(sizeof(nlattr) + payload.size()), type};
  const std::size_t at = bytes.size();
  bytes.resize(at + ((a.nla_len + 3) & ~3u), 0);
  std::memcpy(bytes.data() + at, &a, sizeof(a));
  std::memcpy(bytes.data() + at + sizeof(a), payload.data(), payload.size());
  const std::uint32_t len = static_cast<std::uint32_t>(bytes.size());
  std::memcpy(bytes.data(), &len, sizeof(len));
}

TEST(LocalSaCodec, AttributesAreCheckedAsTheKernelPolicyDoes) {
  auto bad_length = twin::build_resolve(query(twin::Caller::ipoib), 1);
  append_attribute(bad_length, RDMA_NLA_F_MANDATORY | LS_NLA_TYPE_PKEY, {1, 2, 3});
  EXPECT_EQ(single_problem(bad_length), Problem::bad_attribute);

  auto unknown_mandatory = twin::build_resolve(query(twin::Caller::ipoib), 1);
  append_attribute(unknown_mandatory, RDMA_NLA_F_MANDATORY | 30, {1, 2, 3, 4});
  EXPECT_EQ(single_problem(unknown_mandatory), Problem::unknown_mandatory);

  auto unknown_optional = twin::build_resolve(query(twin::Caller::ipoib), 1);
  append_attribute(unknown_optional, 30, {1, 2, 3, 4});
  EXPECT_EQ(single_query(decode_datagram(unknown_optional)).dgid, kDgid);

  auto runs_past = twin::build_resolve(query(twin::Caller::ipoib), 1);
  append_attribute(runs_past, LS_NLA_TYPE_TCLASS, {1});
  const std::uint16_t too_long = 200;
  std::memcpy(runs_past.data() + runs_past.size() - 8, &too_long, sizeof(too_long));
  EXPECT_EQ(single_problem(runs_past), Problem::bad_attribute);
}

TEST(LocalSaCodec, NoDgidAndBadPathUseAreNamed) {
  auto bytes = twin::build_resolve(query(twin::Caller::ipoib), 1);
  bytes.resize(sizeof(nlmsghdr) + 68);  // the resolve header, no attributes
  const std::uint32_t len = static_cast<std::uint32_t>(bytes.size());
  std::memcpy(bytes.data(), &len, sizeof(len));
  EXPECT_EQ(single_problem(bytes), Problem::no_dgid);

  auto bad_use = twin::build_resolve(query(twin::Caller::ipoib), 1);
  bad_use[sizeof(nlmsghdr) + offsetof(rdma_ls_resolve_header, path_use)] = 7;
  EXPECT_EQ(single_problem(bad_use), Problem::bad_path_use);
}

TEST(LocalSaCodec, EveryPathUseReplyMatchesTheKernelMaskForIt) {
  for (PathUse use : {PathUse::all, PathUse::unidirectional, PathUse::gmp}) {
    auto reply = encode_path_reply({RDMA_NL_GET_TYPE(RDMA_NL_LS, RDMA_NL_LS_OP_RESOLVE), 9}, 0, use, path());
    auto verdict = twin::judge(reply, 9, static_cast<std::uint8_t>(use));
    ASSERT_EQ(verdict.outcome, twin::Outcome::path) << to_string(use) << ": " << verdict.why;
    EXPECT_EQ(verdict.paths.at(0), path()) << to_string(use);
    nlmsghdr nl{};
    std::memcpy(&nl, reply.data(), sizeof(nl));
    EXPECT_EQ(nl.nlmsg_flags & NLM_F_REQUEST, 0) << "replies carry no NLM_F_REQUEST";
  }
  EXPECT_EQ(reply_path_flags(PathUse::all), 0x2Bu);  // GMP|PRIMARY|BIDIRECTIONAL, as rdma_cm needs
  EXPECT_EQ(reply_path_flags(PathUse::unidirectional), unsigned{IB_PATH_PRIMARY | IB_PATH_OUTBOUND});
}

TEST(LocalSaCodec, AUnidirectionalRecordWouldFailAReversibleCallerSoItNeverFits) {
  // The twin proves why: PRIMARY|OUTBOUND lacks GMP|BIDIRECTIONAL, the GMP mask, → -EIO.
  auto wrong = encode_path_reply({RDMA_NL_GET_TYPE(RDMA_NL_LS, RDMA_NL_LS_OP_RESOLVE), 3}, 0,
                                 PathUse::unidirectional, path());
  EXPECT_EQ(twin::judge(wrong, 3, LS_RESOLVE_PATH_USE_GMP).outcome, twin::Outcome::eio);
  EXPECT_FALSE(path_fits(PathUse::all, path(false)));
  EXPECT_FALSE(path_fits(PathUse::gmp, path(false)));
  EXPECT_TRUE(path_fits(PathUse::unidirectional, path(false)));
  core::PathRecord dlid0 = path();
  dlid0.dlid = core::Lid{0};
  EXPECT_FALSE(path_fits(PathUse::unidirectional, dlid0));
}

TEST(LocalSaCodec, ErrorReplyMakesTheKernelFallBack) {
  auto reply = encode_error_reply({RDMA_NL_GET_TYPE(RDMA_NL_LS, RDMA_NL_LS_OP_RESOLVE), 5}, 0);
  EXPECT_EQ(twin::judge(reply, 5, LS_RESOLVE_PATH_USE_UNIDIRECTIONAL).outcome, twin::Outcome::fallback);
  EXPECT_EQ(twin::judge(reply, 6, LS_RESOLVE_PATH_USE_UNIDIRECTIONAL).outcome, twin::Outcome::ignored);
}

}  // namespace
}  // namespace ibat::kernel
