// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ResolverGate: the one door through which every input reaches the daemon's Resolver (socket
// requests, the kernel's local SA and neighbour table, the fabric's events, the warm cache). After
// each input it re-arms the one timer that runs Resolver::tick() at Resolver::next_wakeup(), so no
// caller has to remember to: apply() is that one place; the requests' inputs have names of their
// own, the fabric's (core/fabric_input.h) go through apply() from PortRuntime. Reads (stats,
// entries, neighbours, policy) go to resolver() directly.
// See docs/design.md, "The journey of one resolve".
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "core/resolver.h"

namespace ibat::server {

class ResolverGate {
 public:
  ResolverGate(asio::io_context& loop, core::Resolver& resolver);
  // A tick whose timer already fired but has not run yet finds the gate gone and does nothing.
  ~ResolverGate() { *alive_ = false; }
  ResolverGate(const ResolverGate&) = delete;
  ResolverGate& operator=(const ResolverGate&) = delete;

  const core::Resolver& resolver() const { return resolver_; }
  void use_request_ids_from(core::RequestId first) { resolver_.use_request_ids_from(first); }

  // Runs `input` on the Resolver, then re-arms the timer; returns what `input` returns.
  template <class Input>
  auto apply(Input&& input) {
    if constexpr (std::is_void_v<std::invoke_result_t<Input, core::Resolver&>>) {
      input(resolver_);
      arm();
    } else {
      auto result = input(resolver_);
      arm();
      return result;
    }
  }

  core::RequestId resolve(const core::ResolveRequest& request, core::Completion done);
  bool cancel(core::RequestId id);
  void on_neighbour(const core::IpAddr& ip, const core::HwAddr& hw,
                    std::optional<core::Lid> source_lid = std::nullopt);
  bool on_neighbour_removed(const core::IpAddr& ip);
  std::size_t flush_all();
  std::size_t flush(const core::Gid& dgid, std::optional<core::Pkey> pkey = std::nullopt);
  void load_stale(const std::vector<core::CacheEntryView>& entries);
  void set_policy(const core::Policy& policy);  // deadlines may move earlier: re-arms from scratch

  // Arms the timer (start-up); stop() cancels it for good (shutdown).
  void arm();
  void stop();

 private:
  void on_tick();

  core::Resolver& resolver_;
  asio::steady_timer timer_;
  std::optional<core::TimePoint> armed_for_;
  bool stopped_ = false;
  // Shared with the timer's handler: destroying a timer does not cancel a handler already queued.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace ibat::server
