// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SA server model: see sa_model.h.
#include "sim/sa_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ibat::sim {

void SaOptions::set_get_rate(double gets_per_s) {
  const std::int64_t get_ns = std::max<std::int64_t>(1, std::llround(1e9 / gets_per_s));
  const std::int64_t record = std::llround(static_cast<double>(get_ns) * static_cast<double>(record_ns) /
                                           static_cast<double>(work_ns(1)));
  record_ns = record;
  query_ns = get_ns - record;
}

SaModel::SaModel(const SaOptions& options, TimeSeries& series)
    : options_(options), series_(series), worker_free_ns_(options.threads, 0) {
  if (options.threads < 1) throw std::invalid_argument("the SA needs at least one thread");
  if (options.query_ns < 0 || options.record_ns < 0 || options.work_ns(1) < 1) {
    throw std::invalid_argument("SA costs must be >= 0 and a GET must cost something");
  }
}

void SaModel::add_outage(std::int64_t from_ns, std::int64_t to_ns) {
  outages_.emplace_back(from_ns, to_ns);
  std::sort(outages_.begin(), outages_.end());
}

const std::pair<std::int64_t, std::int64_t>* SaModel::outage_at_or_after(std::int64_t t) const {
  for (const auto& o : outages_) {
    if (o.second > t) return &o;
  }
  return nullptr;
}

// What the workers have taken off the FIFO by `t`, and what of it they have finished.
void SaModel::take_started_off_the_queue(std::int64_t t) {
  while (!waiting_.empty() && waiting_.front().start_ns <= t) {
    last_started_ = waiting_.front();
    in_service_.push(last_started_.finish_ns);
    waiting_.pop_front();
  }
  while (!in_service_.empty() && in_service_.top() <= t) in_service_.pop();
}

std::optional<std::int64_t> SaModel::submit(std::int64_t sent_ns, SaQuery query) {
  const std::int64_t arrival = sent_ns + options_.latency_ns;
  ++totals_.arrived;
  if (query.kind == SaRequest::path_table) ++totals_.path_tables_arrived;
  if (query.kind == SaRequest::switch_table) ++totals_.switch_tables_arrived;
  series_.add_sa_arrival(arrival);
  take_started_off_the_queue(arrival);
  const std::size_t in_sa = waiting_.size() + in_service_.size();
  // OpenSM's sa_mad_ctrl_rcv_callback: more than one message queued and the last one dispatched
  // had waited beyond max_msg_fifo_timeout.
  const bool overloaded = options_.fifo_timeout_ns > 0 && waiting_.size() > 1 &&
                          last_started_.wait_ns > options_.fifo_timeout_ns;
  const bool full = options_.queue_limit > 0 && in_sa >= options_.queue_limit;

  const auto* outage = outage_at_or_after(arrival);
  const bool down = outage != nullptr && outage->first <= arrival;
  if (down || overloaded || full) {
    ++totals_.dropped;
    if (query.kind == SaRequest::path_table) ++totals_.path_tables_dropped;
    if (!down) ++totals_.overload_dropped;
    series_.add_sa_drop(arrival);
    return std::nullopt;
  }
  // FIFO: the first worker to be free takes it, never before an earlier arrival started.
  const auto worker = std::min_element(worker_free_ns_.begin(), worker_free_ns_.end());
  const std::int64_t start = std::max(*worker, arrival);
  const std::int64_t work = options_.work_ns(query.records);
  const std::int64_t finish = start + work;
  if (outage != nullptr && finish > outage->first) {
    // Queued when the SM went away: lost with it. The server restarts idle after the outage.
    ++totals_.dropped;
    if (query.kind == SaRequest::path_table) ++totals_.path_tables_dropped;
    series_.add_sa_drop(arrival);
    return std::nullopt;
  }
  *worker = finish;
  waiting_.push_back(Accepted{start, finish, start - arrival});
  totals_.records += query.records;
  totals_.busy_ns += work;
  series_.add_sa_wait(start, start - arrival);
  ++totals_.served;
  series_.add_sa_served(finish);
  return finish + options_.latency_ns;
}

}  // namespace ibat::sim
