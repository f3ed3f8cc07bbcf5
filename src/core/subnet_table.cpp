// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// One port's subnet GetTable as one state machine (see subnet_table.h).
#include "core/subnet_table.h"

#include <algorithm>

namespace ibat::core {

SubnetTable::SubnetTable(std::uint64_t gate_seed, std::size_t subnet_ports, std::optional<std::uint16_t> qos_class,
                         std::uint16_t id_space)
    : gate_(gate_seed), qos_class_(qos_class), id_space_(id_space), subnet_size_(subnet_ports) {}

bool SubnetTable::ready(bool port_ready) const {
  const bool wanted = state_ == TableState::wanted || state_ == TableState::probing;
  return wanted && size_ == 0 && port_ready;
}

void SubnetTable::learn_size(std::size_t ports) { subnet_size_ = std::max(subnet_size_, ports); }

bool SubnetTable::size_wanted(bool window_needs_size) const {
  return window_needs_size && subnet_size_ == 0 && !size_settled_;
}

std::vector<QueryId> SubnetTable::want(TimePoint now) {
  std::vector<QueryId> cancels = drop();  // an answer in flight may be outdated
  state_ = TableState::wanted;
  table_attempts_ = 0;
  retry_at_ = TimePoint{};
  wanted_at_ = now;
  return cancels;
}

std::vector<QueryId> SubnetTable::drop() {
  std::vector<QueryId> cancels;
  if (table_ != 0) cancels.push_back(table_);
  if (probe_ != 0) cancels.push_back(probe_);
  table_ = 0;
  probe_ = 0;
  state_ = TableState::idle;
  gate_.clear();
  return cancels;
}

SubnetTable::Step SubnetTable::step(TimePoint now, bool port_ready, bool window_needs_size, Duration hold,
                                    const Gid& sgid, Pkey pkey) {
  if (!ready(port_ready)) return {};
  if (size_wanted(window_needs_size)) {
    if (now < retry_at_) return {};
    size_ = next_id();
    return {Send::size_query, size_};
  }
  if (!gate_.wanted()) gate_.want(now, subnet_size_, std::max(retry_at_, wanted_at_ + hold));
  if (!gate_.open()) {
    const std::optional<TimePoint> due = gate_.probe_due();
    if (!due || *due > now) return {};
    probe_ = next_id();
    gate_.on_probe_sent(now);
    state_ = TableState::probing;
    return {Send::probe, probe_};
  }
  gate_.clear();
  state_ = TableState::in_flight;
  table_ = next_id();
  sent_ = TableQuery{.id = table_, .sgid = sgid, .pkey = pkey, .qos_class = qos_class_};
  sent_at_ = now;
  return {Send::table, table_};
}

std::optional<TimePoint> SubnetTable::wakeup(TimePoint now, bool port_ready, bool window_needs_size) const {
  if (!ready(port_ready)) return std::nullopt;
  if (size_wanted(window_needs_size)) return std::max(retry_at_, now);
  if (!gate_.wanted() || gate_.open()) return std::max(retry_at_, now);  // step() arms the gate
  if (auto due = gate_.probe_due()) return std::max(*due, now);
  return std::nullopt;
}

void SubnetTable::probe_sent(TimePoint now, bool sent) {
  if (sent) return;
  probe_ = 0;
  state_ = TableState::wanted;
  gate_.on_probe_result(now, false, Duration::zero());  // a sink that cannot probe: as if the queue were empty
}

std::optional<TimePoint> SubnetTable::probe_sent_at(QueryId id) const {
  if (id == 0 || id != probe_) return std::nullopt;
  return gate_.probe_sent_at();
}

std::optional<bool> SubnetTable::on_probe_result(QueryId id, TimePoint now, bool lost, Duration queue) {
  if (id == 0 || id != probe_) return std::nullopt;
  probe_ = 0;
  state_ = TableState::wanted;
  return gate_.on_probe_result(now, lost, queue);
}

bool SubnetTable::on_table_answered(QueryId id, std::size_t records) {
  if (id == 0 || id != table_) return false;
  table_ = 0;
  state_ = TableState::idle;
  subnet_size_ = records;
  return true;
}

bool SubnetTable::on_table_failed(QueryId id, std::optional<TimePoint> retry_at) {
  if (id == 0 || id != table_) return false;
  table_ = 0;
  if (!retry_at) {
    state_ = TableState::idle;
    return true;
  }
  ++table_attempts_;
  retry_at_ = *retry_at;
  state_ = TableState::wanted;
  gate_.clear();
  return true;
}

bool SubnetTable::on_table_unsent(QueryId id) {
  if (id == 0 || id != table_) return false;
  table_ = 0;
  state_ = TableState::idle;
  return true;
}

bool SubnetTable::on_size_result(QueryId id, SizeOutcome outcome, std::size_t lids, TimePoint retry_at) {
  if (id == 0 || id != size_) return false;
  size_ = 0;
  switch (outcome) {
    case SizeOutcome::answered:
      learn_size(lids);
      size_settled_ = true;
      break;
    case SizeOutcome::retry:
      ++size_attempts_;
      retry_at_ = std::max(retry_at_, retry_at);
      break;
    case SizeOutcome::settled: size_settled_ = true; break;
  }
  return true;
}

}  // namespace ibat::core
