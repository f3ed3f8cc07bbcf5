// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Conversions between libibat's C structs (ibat.h) and the core/protocol types the codec speaks.
#pragma once

#include <optional>

#include "client/include/ibat.h"
#include "core/resolve_types.h"

namespace ibat::client {

// nullopt for an unknown target type.
std::optional<core::Target> to_core_target(const ibat_target& target);
// nullopt for an unknown flag bit or a target that is not an IP address.
std::optional<core::ResolveRequest> to_request(const ibat_target& target, const ibat_resolve_opts* opts);
std::optional<core::IpAddr> to_ip(const ibat_target& target);
// Every field but `record`, which the caller copies from the wire.
ibat_path to_c_path(const core::ResolveResult& result);
ibat_target to_c_target(const core::Target& target);

}  // namespace ibat::client
