// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel's "local SA" netlink messages (RDMA_NL_LS, docs/linux.md): decoding the RESOLVE
// requests that ib_sa_path_rec_get() multicasts to RDMA_NL_GROUP_LS, and encoding the replies it
// accepts — one PATH_RECORD attribute, or RDMA_NL_LS_F_ERR so that the kernel asks the SA itself.
// Pure: bytes in, bytes out; every length is checked (fuzzed by tests/fuzz/kernel_local_sa_fuzz.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/types.h"

namespace ibat::kernel {

// How the kernel will use the path (rdma_ls_resolve_header.path_use). It decides which
// PATH_RECORD flags the kernel requires of a reply.
enum class PathUse : std::uint8_t { all = 0, unidirectional = 1, gmp = 2 };
std::string_view to_string(PathUse use);

// A RESOLVE request with its attributes (absent attributes: the kernel did not constrain them).
struct ResolveQuery {
  std::string device;           // device_name, e.g. "mlx5_0"
  std::uint8_t port_num = 0;
  PathUse path_use = PathUse::unidirectional;
  std::optional<core::Gid> dgid;
  std::optional<core::Gid> sgid;
  std::optional<std::uint64_t> service_id;
  std::optional<std::uint8_t> tclass;
  std::optional<core::Pkey> pkey;
  std::optional<std::uint16_t> qos_class;
};

// Why a message cannot be answered with a path. Each is answered F_ERR (when it has a sequence
// number to answer) and counted under its name.
enum class Problem : std::uint8_t {
  truncated,            // the netlink header or the resolve header does not fit
  not_a_request,        // NLM_F_REQUEST missing (a reply or notification: never answered)
  not_local_sa,         // another RDMA netlink client's message
  unsupported_op,       // SET_TIMEOUT, IP_RESOLVE or an unknown op
  bad_attribute,        // an attribute with a wrong length or running past the message
  unknown_mandatory,    // an unknown attribute type with RDMA_NLA_F_MANDATORY set
  bad_path_use,         // path_use outside ALL/UNIDIRECTIONAL/GMP
  no_dgid,              // nothing to resolve
};
std::string_view to_string(Problem problem);

// The part of a request that its reply echoes.
struct MessageId {
  std::uint16_t type = 0;
  std::uint32_t seq = 0;
};

// One netlink message of a datagram.
struct Message {
  MessageId id;
  bool answerable = true;  // false when there is no sound header to answer (truncated, not a request)
  std::variant<ResolveQuery, Problem> content;
};

// Splits a datagram into its netlink messages and decodes each. A broken netlink header ends the
// walk with a `truncated`, unanswerable message.
std::vector<Message> decode_datagram(std::span<const std::uint8_t> bytes);

// PATH_RECORD flags (IB_PATH_*) a reply for `use` carries: UNIDIRECTIONAL PRIMARY|OUTBOUND,
// ALL and GMP GMP|PRIMARY|BIDIRECTIONAL — exactly the mask the kernel requires for that use.
std::uint32_t reply_path_flags(PathUse use);
// Whether `path` may be given for `use`: ALL and GMP promise a reversible path.
bool path_fits(PathUse use, const core::PathRecord& path);

// A good reply: nlmsghdr (same type and seq, no NLM_F_REQUEST) + one PATH_RECORD attribute.
std::vector<std::uint8_t> encode_path_reply(const MessageId& id, std::uint32_t port_id, PathUse use,
                                            const core::PathRecord& path);
// A failed reply: the kernel sends its SA MAD at once.
std::vector<std::uint8_t> encode_error_reply(const MessageId& id, std::uint32_t port_id);

}  // namespace ibat::kernel
