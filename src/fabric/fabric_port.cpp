// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// FabricPort: wires UmadTransport, MadRequester, SaClient, PortMonitor and TrapSubscriber together
// on the owner's loop. Path queries and GetTables that arrive before the SM LID is known wait for
// the first PortInfo; every SM change lets GetTables be tried again, and re-subscribes to traps and
// re-reads the broadcast group when the PortMonitor says (within sm_refresh_spread: PortMonitorLogic).
#include "fabric/fabric_port.h"

#include <vector>

#include "fabric/mad_requester.h"
#include "fabric/port_events.h"
#include "fabric/port_monitor.h"
#include "fabric/sa_client.h"
#include "fabric/trap_subscriber.h"
#include "fabric/umad_transport.h"
#include "mad/constants.h"

namespace ibat::fabric {

struct FabricPort::Impl {
  Impl(asio::io_context& loop, const FabricOptions& opts, FabricEvents evs)
      : options(opts),
        events(std::move(evs)),
        transport(loop, opts.ca, opts.port, table_message_bound(opts.table_max_records)),
        requester(loop, transport, std::random_device{}()),
        sa(requester, RetryPolicy{opts.mad_timeout, opts.mad_retries},
           TableOptions{opts.table_max_records, transport.reassembles_rmpp()}),
        port_events(open_verbs_events(loop, transport.snapshot().ca, transport.snapshot().port, no_port_events)),
        monitor(loop, requester, transport.snapshot().gid, static_cast<std::uint8_t>(transport.snapshot().port),
                MonitorSettings::of(opts.poll_interval, opts.sm_check_interval, opts.mad_timeout,
                                    opts.sm_refresh_spread, port_events != nullptr),
                PortMonitor::Events{[this](const core::LocalPort& p, std::uint8_t sl) { on_local_port(p, sl); },
                                    [this] { on_sm_changed(); },
                                    [this](core::Lid sm_lid, std::function<void(std::optional<bool>)> done) {
                                      traps.check_subscribed(sm_lid, sm_sl, transport.snapshot().gid, std::move(done));
                                    },
                                    [this] { refresh_sm_state(); }}),
        traps(requester, transport, RetryPolicy{opts.mad_timeout, opts.mad_retries},
              TrapSubscriber::Events{[this](const core::Gid& gid) {
                                       if (events.input) events.input->on_gid_in_service(gid);
                                     },
                                     [this](const core::Gid& gid) {
                                       if (events.input) events.input->on_gid_out_of_service(gid);
                                     },
                                     [this](std::uint16_t trap, bool ok) { on_trap_subscribed(trap, ok); }}) {
    sa.on_tables_off([this](const std::string& reason) {
      if (events.on_table_fallback) events.on_table_fallback(reason);
    });
  }

  void on_trap_subscribed(std::uint16_t trap, bool ok) {
    if (ok) monitor.subscription_confirmed();
    if (events.on_trap_subscribed) events.on_trap_subscribed(trap, ok);
  }

  void on_mad(const ReceivedMad& mad) {
    if (requester.on_receive(mad)) return;
    traps.on_unsolicited(mad, sa.sm_lid());
  }

  void on_local_port(const core::LocalPort& port, std::uint8_t port_sm_sl) {
    const bool first_sm = sa.sm_lid().value == 0 && port.sm_lid.value != 0;
    sm_sl = port_sm_sl;
    if (port.sm_lid.value != 0) sa.set_sm(port.sm_lid, sm_sl);
    current = port;
    if (events.input) events.input->on_local_port(port);
    if (first_sm) {
      monitor.sm_found();
      std::vector<core::PathQuery> waiting;
      waiting.swap(queued);
      for (const auto& q : waiting) send(q);
      std::vector<QueuedTable> tables;
      tables.swap(queued_tables);
      for (auto& t : tables) {
        if (sa.tables_usable()) {
          query_table(t);
        } else {
          t.done(failed_table(core::Error::invalid, sa.tables_off_reason()));
        }
      }
    }
  }

  void on_sm_changed() {
    ++sm_changes;
    sa.on_sm_changed();
    if (events.input) events.input->on_sm_changed();
  }

  // What must be redone with every new SM: trap subscriptions and the broadcast group. Every host
  // of the subnet sees the new SM at once; their refreshes together would queue at the SA ahead of
  // the GETs renewing the paths in use (a few MADs per host, so a queue that grows with the subnet:
  // docs/scale.md), so PortMonitorLogic spreads them.
  void refresh_sm_state() {
    if (options.subscribe_traps) traps.subscribe(sa.sm_lid(), sm_sl);
    sa.query_broadcast_group(transport.snapshot().gid, options.broadcast_pkey,
                             [this](core::Error error, const core::BroadcastParams& params) {
                               if (error == core::Error::ok && events.input) events.input->on_broadcast_params(params);
                             });
  }

  struct QueuedTable {
    core::Gid sgid;
    core::Pkey pkey;
    std::function<void(const PathTable&)> done;
    core::QueryId id = 0;  // the Resolver's, for cancel_query (0: ibat-probe's)
    std::optional<std::uint16_t> qos_class;
  };

  bool query_table(QueuedTable& table) {
    if (sa.sm_lid().value == 0 && sa.tables_usable()) {
      queued_tables.push_back(std::move(table));
      return true;
    }
    return sa.query_path_table(table.sgid, table.pkey, std::move(table.done), table.id, table.qos_class);
  }

  void send(const core::PathQuery& query) {
    if (sa.sm_lid().value == 0) {
      queued.push_back(query);
      return;
    }
    sa.query_path(query, [this, id = query.id](const core::QueryResult& result) {
      if (events.input) events.input->on_query_result(id, result);
    });
  }

  FabricOptions options;
  FabricEvents events;
  UmadTransport transport;
  MadRequester requester;
  SaClient sa;
  std::string no_port_events;  // why there is no HCA event source
  std::unique_ptr<PortEventSource> port_events;
  PortMonitor monitor;
  TrapSubscriber traps;
  core::LocalPort current;
  std::uint8_t sm_sl = 0;
  std::vector<core::PathQuery> queued;
  std::vector<QueuedTable> queued_tables;
  std::uint64_t sm_changes = 0;
};

FabricPort::FabricPort(asio::io_context& loop, const FabricOptions& options, FabricEvents events)
    : impl_(std::make_unique<Impl>(loop, options, std::move(events))) {}

FabricPort::~FabricPort() { stop(); }

void FabricPort::start() {
  Impl& impl = *impl_;
  impl.transport.start([&impl](const ReceivedMad& mad) { impl.on_mad(mad); });
  // A MAD to the SM or SA that timed out: it may have restarted or moved, unless it has answered
  // since (a queue at a busy SA: checking the SM then only adds to it). The SM and the SA answer
  // from the SM's LID.
  impl.requester.on_remote_timeout([&impl](MadRoute, core::Lid, core::TimePoint attempt_sent) {
    impl.monitor.remote_timeout(attempt_sent);
  });
  impl.requester.on_answer([&impl](core::Lid slid, core::TimePoint at) {
    if (slid == impl.sa.sm_lid()) impl.monitor.heard(at);
  });
  if (impl.port_events) {
    impl.port_events->start([&impl](PortEvent e) {
      if (impl.events.on_port_event) impl.events.on_port_event(e);
      impl.monitor.on_port_event(e);
    });
  }
  impl.monitor.start();
}

void FabricPort::stop() {
  if (impl_->port_events) impl_->port_events->stop();
  impl_->monitor.stop();
  impl_->transport.stop();
}

void FabricPort::send_path_query(const core::PathQuery& query) { impl_->send(query); }

void FabricPort::cancel_query(core::QueryId id) {
  if (impl_->sa.cancel(id)) return;
  std::erase_if(impl_->queued, [id](const core::PathQuery& q) { return q.id == id; });
  std::erase_if(impl_->queued_tables, [id](const Impl::QueuedTable& t) { return t.id != 0 && t.id == id; });
}

bool FabricPort::query_path_table(const core::Gid& sgid, core::Pkey pkey, std::function<void(const PathTable&)> done) {
  Impl::QueuedTable table{sgid, pkey, std::move(done), 0, std::nullopt};
  return impl_->query_table(table);
}

bool FabricPort::send_table_query(const core::TableQuery& query) {
  auto done = [this, id = query.id](const PathTable& table) {
    if (impl_->events.input) impl_->events.input->on_table_result(id, {table.error, table.paths, table.reason});
  };
  Impl::QueuedTable table{query.sgid, query.pkey, std::move(done), query.id, query.qos_class};
  return impl_->query_table(table);
}

bool FabricPort::send_size_query(const core::SubnetSizeQuery& query) {
  if (impl_->sa.sm_lid().value == 0) return false;
  return impl_->sa.query_subnet_size([this, id = query.id](const core::SubnetSizeResult& size) {
    if (impl_->events.input) impl_->events.input->on_subnet_size(id, size);
  });
}

// A GET like any other (its id marks it for the Resolver), sent only once an SA is known.
bool FabricPort::send_probe(const core::PathQuery& query) {
  if (impl_->sa.sm_lid().value == 0) return false;
  impl_->send(query);
  return true;
}

bool FabricPort::tables_usable() const { return impl_->sa.tables_usable(); }

FabricStats FabricPort::stats() const {
  const RequesterCounters& c = impl_->requester.counters();
  FabricStats s;
  s.mads_sent = c.sent;
  s.local_mads_sent = c.local_sent;
  s.remote_mads_sent = c.remote_sent;
  s.mads_received = c.received;
  s.mad_timeouts = c.timeouts;
  s.mad_retries = c.retries;
  s.late_or_duplicate = c.late_or_duplicate;
  s.invalid_responses = c.invalid_responses;
  s.reports = impl_->traps.reports();
  s.rejected_reports = impl_->traps.rejected_reports();
  s.sm_changes = impl_->sm_changes;
  s.oversized_mads = impl_->transport.oversized();
  const TableCounters& t = impl_->sa.table_counters();
  s.sa_gettables_sent = t.sent;
  s.sa_gettables_answered = t.answered;
  s.sa_table_records = t.records;
  s.sa_table_bytes = t.bytes;
  const core::Lid sa_lid = impl_->sa.sm_lid();
  const auto us = [](core::Duration d) {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  };
  const RoundTripEstimate* rtt = impl_->requester.round_trip(mad::mgmt_class::kSubnAdm, sa_lid);
  if (rtt) {
    s.sa_srtt_us = us(rtt->srtt());
    s.sa_mad_timer_floor_us = us(rtt->timer_floor());
  }
  if (const TableTimer* table = impl_->requester.table_timer(mad::attr::kPathRecord, sa_lid)) {
    s.sa_table_ns_per_record = static_cast<std::uint64_t>(table->per_record_ns());
    s.sa_table_timer_floor_us = us(table->timer_floor(rtt ? rtt->srtt() : core::Duration::zero()));
  }
  s.port_events = impl_->port_events != nullptr;
  return s;
}

std::string FabricPort::port_events_status() const {
  const PortSnapshot& snap = impl_->transport.snapshot();
  if (impl_->port_events) return "verbs async events of " + snap.ca + " port " + std::to_string(snap.port);
  return "none (" + impl_->no_port_events + "): SM/SA checked every sm_check_interval_s";
}

core::LocalPort FabricPort::local_port() const {
  if (auto port = impl_->monitor.local_port()) return *port;
  const PortSnapshot& snap = impl_->transport.snapshot();
  return core::LocalPort{snap.gid, snap.lid, snap.sm_lid, snap.active};
}

}  // namespace ibat::fabric
