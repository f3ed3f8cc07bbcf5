// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortMonitor: the PortInfo -> (the check's MADs, as PortMonitorLogic says) poll cycle, its timer
// and the refresh timer.
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

}  // namespace

core::TimePoint PortMonitor::now() { return core::SteadyClock{}.now(); }

PortMonitor::PortMonitor(asio::io_context& loop, MadRequester& requester, const core::Gid& port_gid,
                         std::uint8_t port_number, const MonitorSettings& settings, Events events)
    : loop_(loop),
      requester_(requester),
      port_gid_(port_gid),
      port_number_(port_number),
      interval_(settings.poll),
      policy_(settings.check_policy),
      events_(std::move(events)),
      timer_(loop),
      refresh_timer_(loop),
      refresh_rng_(std::random_device{}()),
      logic_(settings, port_gid.interface_id() ^ std::random_device{}()) {}

void PortMonitor::start() {
  if (running_) return;
  running_ = true;
  logic_.start(now());
  poll();
}

void PortMonitor::on_port_event(PortEvent event) {
  logic_.suspect();
  if (event == PortEvent::client_reregister) {
    detector_.forget_sm();
    sm_changed();
  }
  if (!running_ || polling_) return;
  timer_.cancel();
  poll();
}

void PortMonitor::sm_found() {
  logic_.sm_found(now());
  refresh_when_due();
}

// The logic drops the subscriptions and draws the refresh; the owner hears of the change first
// (its SaClient follows the new SM), then the refresh goes, at once or when its timer fires.
void PortMonitor::sm_changed() {
  const core::TimePoint at = logic_.sm_changed(now(), refresh_rng_);
  if (events_.on_sm_changed) events_.on_sm_changed();
  refresh_timer_.cancel();
  if (at <= now()) return refresh_when_due();
  refresh_timer_.expires_at(at);
  refresh_timer_.async_wait([this](const std::error_code& ec) {
    if (!ec) refresh_when_due();
  });
}

void PortMonitor::refresh_when_due() {
  if (logic_.take_refresh(now()) && events_.refresh_sm_state) events_.refresh_sm_state();
}

void PortMonitor::stop() {
  running_ = false;
  polling_ = false;
  timer_.cancel();
  refresh_timer_.cancel();
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
      if (detector_.port() && !(*detector_.port() == *observation_.port)) logic_.suspect();
    }
  }
  observation_.sm_asked = false;
  // Ask the SM this poll found (or the last one known when PortInfo went unanswered).
  const std::optional<PortSample>& known = observation_.port ? observation_.port : detector_.port();
  ask(logic_.begin_check(now(), known && known->sm_lid.value != 0 && known->active));
}

void PortMonitor::ask(CheckMad mad) {
  switch (mad) {
    case CheckMad::sm_info: return ask_sm_info();
    case CheckMad::subscription: return check_sa_state();
    case CheckMad::none: return finish_poll();
  }
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
  ask(logic_.sm_info_answered(now(), observation_.sm ? std::optional<bool>(observation_.sm->master) : std::nullopt));
}

// Without an owner to ask the SA (a test), the check goes unanswered.
void PortMonitor::check_sa_state() {
  if (!events_.check_sa_state) return ask(logic_.subscription_answered(now(), std::nullopt));
  const core::Lid sm_lid = observation_.port ? observation_.port->sm_lid : detector_.port()->sm_lid;
  events_.check_sa_state(sm_lid, [this, poll = poll_number_](std::optional<bool> kept) {
    if (poll != poll_number_ || !running_) return;
    observation_.sa_state_kept = kept;
    ask(logic_.subscription_answered(now(), kept));
  });
}

// The check, if any, is over (the logic has recorded it).
void PortMonitor::finish_poll() {
  ++poll_number_;  // a late SA-state answer for this poll is ignored
  polling_ = false;
  const PollVerdict verdict = detector_.observe(observation_);
  if (verdict.local_port_changed && events_.on_local_port) {
    events_.on_local_port(*local_port(), detector_.port()->sm_sl);
  }
  if (verdict.sm_changed) sm_changed();
  if (!running_) return;
  timer_.expires_at(poll_started_ + interval_);
  timer_.async_wait([this](const std::error_code& ec) {
    if (!ec && running_ && !polling_) poll();
  });
}

}  // namespace ibat::fabric
