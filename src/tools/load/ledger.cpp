// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-load: request ledger (exactly-once accounting, DLID checks, latency percentiles).
#include "tools/load/ledger.h"

#include <algorithm>
#include <cmath>

namespace ibat::load {

std::string reason_name(int status) {
  switch (status) {
    case IBAT_OK: return "ok";
    case IBAT_ETIMEOUT: return "timeout";
    case IBAT_EUNREACHABLE: return "unreachable";
    case IBAT_ENORECORD: return "no-record";
    case IBAT_EOVERLOADED: return "overloaded";
    case IBAT_ECANCELLED: return "cancelled";
    case IBAT_EINVALID: return "invalid";
    case IBAT_EDENIED: return "denied";
    case IBAT_EMALFORMED: return "malformed";
    case IBAT_EUNSUPPORTED: return "unsupported";
    case IBAT_EDISCONNECTED: return "disconnected";
    case IBAT_EPROTO: return "protocol";
    default: return "status-" + std::to_string(status);
  }
}

Record& Ledger::open(Clock::time_point now, std::optional<std::uint16_t> expected_dlid, bool uncached) {
  ++sent_;
  if (uncached) ++uncached_;
  return records_.emplace_back(Record{this, now, expected_dlid, 0, uncached});
}

void Ledger::refused(Record& r, int status) {
  --sent_;
  if (r.uncached) --uncached_;
  ++refused_[reason_name(status)];
  records_.pop_back();  // `r` is the last record: refusals happen right after open()
}

void Ledger::on_answer(void* user_data, std::uint32_t, int status, const ibat_path* path) {
  auto* r = static_cast<Record*>(user_data);
  r->ledger->record_answer(*r, status, path);
}

void Ledger::record_answer(Record& r, int status, const ibat_path* path) {
  if (++r.answers > 1) {
    ++answered_twice_;
    return;
  }
  if (abandoning_) {
    ++abandoned_;
    return;
  }
  ++answered_;
  latencies_ms_.push_back(std::chrono::duration<double, std::milli>(Clock::now() - r.sent).count());
  if (status != IBAT_OK) {
    ++failures_[reason_name(status)];
    return;
  }
  ++ok_;
  if (path->dlid == 0) ++dlid0_;
  else if (r.expected_dlid && path->dlid != *r.expected_dlid) ++wrong_dlid_;
}

namespace {

double percentile(std::vector<double> sorted, double p) {
  if (sorted.empty()) return 0;
  std::sort(sorted.begin(), sorted.end());
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double round3(double v) { return std::round(v * 1000) / 1000; }

}  // namespace

std::vector<std::string> Ledger::violations(bool expect_exists, const std::vector<std::string>& allowed) const {
  std::vector<std::string> out;
  std::uint64_t unanswered = sent_ - answered_ - abandoned_;
  if (unanswered) out.push_back(std::to_string(unanswered) + " requests never answered");
  if (answered_twice_) out.push_back(std::to_string(answered_twice_) + " requests answered twice");
  if (dlid0_) out.push_back(std::to_string(dlid0_) + " answers with DLID 0");
  if (wrong_dlid_) out.push_back(std::to_string(wrong_dlid_) + " answers with another DLID than expected");
  if (expect_exists) {
    for (const auto& [reason, n] : failures_)
      if (std::find(allowed.begin(), allowed.end(), reason) == allowed.end())
        out.push_back(std::to_string(n) + " failures '" + reason + "' for existing destinations");
  }
  return out;
}

nlohmann::json Ledger::summary(bool expect_exists, const std::vector<std::string>& allowed) const {
  std::uint64_t failed = 0;
  for (const auto& [reason, n] : failures_) failed += n;
  auto worst = std::max_element(latencies_ms_.begin(), latencies_ms_.end());
  return nlohmann::json{
      {"sent", sent_},
      {"answered", answered_},
      {"answered_twice", answered_twice_},
      {"unanswered", sent_ - answered_ - abandoned_},
      {"abandoned", abandoned_},
      {"ok", ok_},
      {"dlid0", dlid0_},
      {"wrong_dlid", wrong_dlid_},
      {"uncached_requests", uncached_},
      {"failures", failures_},
      {"failures_total", failed},
      {"refused_locally", refused_},
      {"latency_ms",
       {{"p50", round3(percentile(latencies_ms_, 0.50))},
        {"p99", round3(percentile(latencies_ms_, 0.99))},
        {"max", round3(worst == latencies_ms_.end() ? 0.0 : *worst)}}},
      {"violations", violations(expect_exists, allowed)},
  };
}

}  // namespace ibat::load
