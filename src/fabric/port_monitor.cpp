// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortMonitor: the PortInfo -> (SMInfo -> SA state) poll cycle and its timer.
#include "fabric/port_monitor.h"

#include <random>

#include "mad/port_info.h"
#include "mad/sm_info.h"
#include "mad/smp.h"

namespace ibat::fabric {
namespace {

const MadExpectation kPortInfoAnswer{mad::mgmt_class::kSubnDirectedRoute, mad::method::kGetResp,
                                     mad::attr::kPortInfo, false};
const MadExpectation kSmInfoAnswer{mad::mgmt_class::kSubnLidRouted, mad::method::kGetResp, mad::attr::kSmInfo,
                                   true};

OutgoingMad smp(MadRoute route, core::Lid dlid, const mad::MadBuffer& bytes) {
  OutgoingMad out;
  out.route = route;
  out.dlid = dlid;
  out.remote_qpn = 0;
  out.bytes.assign(bytes.begin(), bytes.end());
  return out;
}

// The attribute data of a successful SMP answer, or nullopt.
std::optional<mad::Smp> smp_data(const MadAnswer* answer) {
  if (!answer) return std::nullopt;
  auto decoded = mad::decode_smp(answer->bytes);
  if (!decoded.ok() || decoded->header.status != 0) return std::nullopt;
  return *decoded;
}

core::TimePoint now() { return std::chrono::time_point_cast<core::Duration>(std::chrono::steady_clock::now()); }

}  // namespace

PortMonitor::PortMonitor(asio::io_context& loop, MadRequester& requester, const core::Gid& port_gid,
                         std::uint8_t port_number, core::Duration interval, core::Duration sm_check_interval,
                         const RetryPolicy& policy, Events events)
    : loop_(loop),
      requester_(requester),
      port_gid_(port_gid),
      port_number_(port_number),
      interval_(interval),
      policy_(policy),
      events_(std::move(events)),
      timer_(loop),
      schedule_(interval, sm_check_interval, port_gid.interface_id() ^ std::random_device{}()) {}

void PortMonitor::start() {
  if (running_) return;
  running_ = true;
  schedule_.start(now());
  poll();
}

void PortMonitor::on_port_event(PortEvent event) {
  schedule_.suspect();
  if (event == PortEvent::client_reregister) {
    detector_.forget_sm();
    if (events_.on_sm_changed) events_.on_sm_changed();
  }
  if (!running_ || polling_) return;
  timer_.cancel();
  poll();
}

void PortMonitor::stop() {
  running_ = false;
  polling_ = false;
  timer_.cancel();
  if (in_flight_) requester_.cancel(*in_flight_);
  in_flight_.reset();
}

std::optional<core::LocalPort> PortMonitor::local_port() const {
  if (!detector_.port()) return std::nullopt;
  const PortSample& p = *detector_.port();
  return core::LocalPort{port_gid_, p.lid, p.sm_lid, p.active, p.link_down};
}

void PortMonitor::poll() {
  polling_ = true;
  ++poll_number_;
  poll_started_ = std::chrono::steady_clock::now();
  observation_ = {};
  in_flight_ = requester_.submit(
      smp(MadRoute::smi_directed, core::Lid{mad::kPermissiveLid},
          mad::build_smp_get_directed(0, mad::attr::kPortInfo, port_number_, {})),
      kPortInfoAnswer, policy_, [this](const MadAnswer* answer) { on_port_info(answer); });
}

void PortMonitor::on_port_info(const MadAnswer* answer) {
  in_flight_.reset();
  if (auto reply = smp_data(answer)) {
    if (auto info = mad::decode_port_info(reply->data); info.ok()) {
      observation_.port = PortSample{core::Lid{info->lid}, core::Lid{info->master_sm_lid}, info->master_sm_sl,
                                     info->state() == mad::PortState::active,
                                     info->state() == mad::PortState::down};
      if (detector_.port() && !(*detector_.port() == *observation_.port)) schedule_.suspect();
    }
  }
  check_ = schedule_.due(now());
  observation_.sm_asked = false;
  // Ask the SM this poll found (or the last one known when PortInfo went unanswered).
  const std::optional<PortSample>& known = observation_.port ? observation_.port : detector_.port();
  if (check_ == SmCheck::none || !known || known->sm_lid.value == 0 || !known->active) return finish_poll();
  if (check_ == SmCheck::routine && events_.check_sa_state) return check_sa_state();
  ask_sm_info();
}

void PortMonitor::ask_sm_info() {
  const core::Lid sm_lid = observation_.port ? observation_.port->sm_lid : detector_.port()->sm_lid;
  observation_.sm_asked = true;
  in_flight_ = requester_.submit(smp(MadRoute::smi_lid, sm_lid, mad::build_smp_get_lid_routed(0, mad::attr::kSmInfo, 0)),
                                 kSmInfoAnswer, policy_, [this](const MadAnswer* a) { on_sm_info(a); });
}

void PortMonitor::on_sm_info(const MadAnswer* answer) {
  in_flight_.reset();
  if (auto reply = smp_data(answer)) {
    if (auto info = mad::decode_sm_info(reply->data); info.ok()) {
      observation_.sm = SmSample{info->guid, info->act_count, info->state() == mad::SmState::master};
    }
  }
  if (check_ == SmCheck::full && observation_.sm && observation_.sm->master && events_.check_sa_state) {
    return check_sa_state();
  }
  finish_poll();
}

void PortMonitor::check_sa_state() {
  const core::Lid sm_lid = observation_.port ? observation_.port->sm_lid : detector_.port()->sm_lid;
  events_.check_sa_state(sm_lid, [this, poll = poll_number_](std::optional<bool> kept) {
    if (poll != poll_number_ || !running_) return;
    observation_.sa_state_kept = kept;
    // A routine check the SA did not settle (no answer, nothing confirmed yet) asks the SM.
    if (check_ == SmCheck::routine && !kept) return ask_sm_info();
    finish_poll();
  });
}

void PortMonitor::finish_poll() {
  ++poll_number_;  // a late SA-state answer for this poll is ignored
  polling_ = false;
  const bool master_seen = observation_.sm && observation_.sm->master;
  schedule_.checked(now(), check_, master_seen || observation_.sa_state_kept == true);
  const PollVerdict verdict = detector_.observe(observation_);
  if (verdict.local_port_changed && events_.on_local_port) {
    events_.on_local_port(*local_port(), detector_.port()->sm_sl);
  }
  if (verdict.sm_changed) schedule_.suspect();  // a full check next: the new SM's baseline
  if (verdict.sm_changed && events_.on_sm_changed) events_.on_sm_changed();
  if (!running_) return;
  timer_.expires_at(poll_started_ + interval_);
  timer_.async_wait([this](const std::error_code& ec) {
    if (!ec && running_ && !polling_) poll();
  });
}

}  // namespace ibat::fabric
