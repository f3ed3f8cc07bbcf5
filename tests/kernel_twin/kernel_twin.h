// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel twin: what Linux's drivers/infiniband/core/sa_query.c does on the local SA channel,
// rebuilt for tests (docs/linux.md says what ran against it). It builds the RESOLVE requests that
// ib_sa_path_rec_get() multicasts for IPoIB, rdma_cm and SRP, and judges a reply the way the kernel
// does (ib_nl_is_good_resolve_resp, ib_nl_process_good_resolve_rsp): F_ERR or a bad attribute →
// SA fallback; otherwise up to 3 PATH_RECORDs whose flags hold the mask of the path_use, and none
// → -EIO for the caller with no fallback.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"

namespace ibat::twin {

// Who in the kernel asks, which decides the component mask and so the attributes and path_use.
enum class Caller {
  ipoib,    // ipoib_main.c path_rec_start: DGID SGID NUMB_PATH TCLASS PKEY, not reversible
  rdma_cm,  // cma.c cma_query_ib_route: DGID SGID PKEY NUMB_PATH REVERSIBLE SERVICE_ID + QOS_CLASS/TCLASS
  srp,      // ib_srp.c srp_ping_target/srp_lookup_path: SERVICE_ID DGID SGID NUMB_PATH PKEY
};
std::string_view to_string(Caller caller);

struct KernelQuery {
  Caller caller = Caller::ipoib;
  core::Gid sgid;
  core::Gid dgid;
  core::Pkey pkey{0xFFFF};
  std::uint8_t tclass = 0;
  std::uint64_t service_id = 0;
  std::optional<std::uint16_t> qos_class;  // rdma_cm sends QOS_CLASS when set, TCLASS otherwise
};

// rdma_ls_resolve_header.path_use the kernel picks: ALL when REVERSIBLE is in the mask, else UNIDIRECTIONAL.
std::uint8_t path_use_of(Caller caller);

// The netlink message (nlmsghdr + resolve header + attributes) the kernel multicasts.
std::vector<std::uint8_t> build_resolve(const KernelQuery& query, std::uint32_t seq,
                                        std::string_view device = "mlx5_0", std::uint8_t port = 1);

enum class Outcome {
  path,      // the caller gets paths[0] (and alternates)
  fallback,  // the kernel sends its own SA MAD at once
  eio,       // a "good" reply without a matching record: the caller fails with -EIO, no fallback
  ignored,   // not a reply to this request (wrong seq/type, broken header): the kernel waits on
};
std::string_view to_string(Outcome outcome);

struct Verdict {
  Outcome outcome = Outcome::ignored;
  std::vector<core::PathRecord> paths;
  std::uint32_t first_flags = 0;  // flags of the first accepted record
  std::string why;
};

// How the kernel treats `reply` when it waits for request `seq` with `path_use`.
Verdict judge(std::span<const std::uint8_t> reply, std::uint32_t seq, std::uint8_t path_use);

}  // namespace ibat::twin
