// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat-load: the ledger of every request sent and its outcome — exactly-once accounting, DLID
// checks, failures by reason and latency — and the invariants checked on it at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ibat.h"

namespace ibat::load {

using Clock = std::chrono::steady_clock;

class Ledger;

// One request. Its address is the callback's user_data, so records never move (std::deque).
struct Record {
  Ledger* ledger;
  Clock::time_point sent;
  std::optional<std::uint16_t> expected_dlid;
  std::uint8_t answers = 0;
  bool uncached = false;
};

class Ledger {
 public:
  Record& open(Clock::time_point now, std::optional<std::uint16_t> expected_dlid, bool uncached);
  // The send was refused locally (the library's status); the record is dropped from the books.
  void refused(Record& r, int status);
  // libibat's completion callback (user_data is the Record).
  static void on_answer(void* user_data, std::uint32_t request_id, int status, const ibat_path* path);

  // While set, answers count as abandoned (the client is closing a connection with requests in
  // flight; libibat completes them with `cancelled`), not as answers or failures.
  void set_abandoning(bool on) { abandoning_ = on; }
  std::uint64_t outstanding() const { return sent_ - answered_ - abandoned_; }

  // Summary and invariants: unanswered, answered twice, DLID 0, wrong DLID, and failures whose
  // reason is not in `allowed` when expect_exists.
  nlohmann::json summary(bool expect_exists, const std::vector<std::string>& allowed) const;
  std::vector<std::string> violations(bool expect_exists, const std::vector<std::string>& allowed) const;

 private:
  void record_answer(Record& r, int status, const ibat_path* path);

  std::deque<Record> records_;
  std::uint64_t sent_ = 0, answered_ = 0, answered_twice_ = 0, abandoned_ = 0;
  bool abandoning_ = false;
  std::uint64_t ok_ = 0, dlid0_ = 0, wrong_dlid_ = 0, uncached_ = 0;
  std::map<std::string, std::uint64_t> failures_, refused_;
  std::vector<double> latencies_ms_;
};

// Short name of a status ("timeout", "unreachable", ..., "disconnected").
std::string reason_name(int status);

}  // namespace ibat::load
