// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The RMPP sender and receiver of the lab's kernel MAD layer twin (see rmpp_window.h).
#include "rmpp_window.h"

#include <algorithm>

namespace ibat::umad_twin {

std::chrono::milliseconds rmpp_ack_wait(std::uint32_t timeout_ms) {
  const std::chrono::milliseconds asked{timeout_ms};
  return timeout_ms == 0 || asked > kRmppMaxAckWait ? kRmppMaxAckWait : asked;
}

std::optional<std::uint8_t> rmpp_fault(std::span<const std::uint8_t> mad) {
  if (rmpp_version(mad) != kRmppVersion) return kRmppStatusBadVersion;
  const std::uint8_t type = rmpp_type(mad);
  if (type < kRmppTypeData || type > kRmppTypeAbort) return kRmppStatusBadType;
  return std::nullopt;
}

// --- the sender

RmppSender::RmppSender(std::uint32_t segments, std::uint32_t retries)
    : segments_(std::max<std::uint32_t>(segments, 1)), max_retries_(retries), retries_left_(retries) {}

RmppSender::Burst RmppSender::send_up_to_window() {
  const std::uint32_t last = std::min(window_last_, segments_);
  Burst burst{sent_ + 1, last};
  sent_ = std::max(sent_, last);
  return burst;
}

RmppSender::Burst RmppSender::start() { return send_up_to_window(); }

RmppSender::Reaction RmppSender::abort_with(std::uint8_t status) const {
  Reaction r;
  r.abort = status;
  r.ended = !acknowledged();  // the kernel keeps a send whose segments all got through
  return r;
}

RmppSender::Reaction RmppSender::on_ack(std::uint32_t segment, std::uint32_t window_last, std::uint8_t status) {
  if (status != 0) return abort_with(kRmppStatusIllegalStatus);
  if (window_last < segment) return abort_with(kRmppStatusWindowTooSmall);
  if (acknowledged()) return {};  // a repeat of the last ACK
  if (segment > segments_ || segment > window_last_) return abort_with(kRmppStatusSegmentTooBig);
  if (window_last < window_last_ || segment < last_ack_) return {};  // older than one already seen
  if (segment > last_ack_) {
    last_ack_ = segment;
    retries_left_ = max_retries_;
  }
  window_last_ = window_last;
  Reaction r;
  if (acknowledged()) {
    r.completed = true;
  } else {
    r.send = send_up_to_window();
  }
  return r;
}

RmppSender::Reaction RmppSender::on_stop(std::uint8_t status) {
  if (status != kRmppStatusResourcesExhausted) return abort_with(kRmppStatusIllegalStatus);
  Reaction r;
  r.ended = !acknowledged();
  return r;
}

RmppSender::Reaction RmppSender::on_abort(std::uint8_t status) {
  if (status < kRmppStatusAbortMin || status > kRmppStatusAbortMax) return abort_with(kRmppStatusIllegalStatus);
  Reaction r;
  r.ended = !acknowledged();
  return r;
}

RmppSender::Reaction RmppSender::on_fault(std::uint8_t status) { return abort_with(status); }

std::optional<RmppSender::Burst> RmppSender::on_timeout() {
  if (acknowledged() || retries_left_ == 0) return std::nullopt;
  retries_left_--;
  sent_ = last_ack_;
  return send_up_to_window();
}

// --- the receiver

bool Reassembler::append(Transfer& t, std::span<const std::uint8_t> seg) const {
  const std::size_t header = t.header.size();
  if (t.message.size() + (kMadBytes - header) > max_bytes_) return false;
  t.message.insert(t.message.end(), seg.begin() + static_cast<std::ptrdiff_t>(header), seg.begin() + kMadBytes);
  t.in_order = segment_number(seg);
  return true;
}

Bytes Reassembler::ack(Transfer& t) const {
  t.last_ack = t.in_order;
  return control_mad(t.header, kRmppTypeAck, 0, t.in_order, t.window_last);
}

Reassembler::Result Reassembler::finish(Transfer& t, std::span<const std::uint8_t> last, RmppClock::time_point now) const {
  using Kind = Result::Kind;
  // The last segment's PayloadLength says how much of it is data; the first's, the whole transfer.
  const std::size_t header = t.header.size();
  const std::size_t per_segment = kMadBytes - header;
  const std::size_t own = payload_length(last);
  const std::size_t class_part = header - kRmppHeaderEnd;
  const Bytes abort = control_mad(t.header, kRmppTypeAbort, kRmppStatusBadLength);
  if (own < class_part || own - class_part > per_segment) {
    return {Kind::dropped, {}, "last segment's PayloadLength " + std::to_string(own) + " out of range", abort};
  }
  const std::size_t pad = per_segment - (own - class_part);
  const std::size_t whole = std::size_t{t.in_order} * kRmppPayloadPerSegment - pad;
  if (whole != t.first_payload_length) {
    return {Kind::dropped, {}, "first segment announced " + std::to_string(t.first_payload_length) +
                                   " payload bytes, the stream carried " + std::to_string(whole), abort};
  }
  t.message.resize(t.message.size() - pad);
  Result done{Kind::complete, std::move(t.message), {}, ack(t)};
  t.message = {};
  t.held.clear();
  t.joined = true;
  t.deadline = now + kRmppJoinedMemory;
  return done;
}

Reassembler::Result Reassembler::add(Source source, std::span<const std::uint8_t> seg, RmppClock::time_point now) {
  using Kind = Result::Kind;
  if (seg.size() < kMadBytes) return {Kind::dropped, {}, "segment shorter than a MAD", {}};
  const std::uint8_t cls = mgmt_class(seg);
  const std::size_t header = data_offset(cls);
  const Key key{source, cls, tid(seg)};
  const std::uint32_t number = segment_number(seg);
  const std::string name = "segment " + std::to_string(number);

  if (rmpp_status(seg) != 0) {
    return {Kind::dropped, {}, name + " with RMPPStatus " + std::to_string(rmpp_status(seg)),
            control_mad(seg, kRmppTypeAbort, kRmppStatusIllegalStatus)};
  }
  const bool first = (rmpp_flags(seg) & kRmppFlagFirst) != 0;
  if (first != (number == 1)) {
    return {Kind::dropped, {}, first ? "FIRST segment numbered " + std::to_string(number) : "segment 1 without FIRST",
            control_mad(seg, kRmppTypeAbort, kRmppStatusBadSegment)};
  }
  auto it = transfers_.find(key);
  if (it == transfers_.end()) {
    if (!first) return {Kind::ignored, {}, name + " of no message begun", {}};
    Transfer fresh;
    fresh.header.assign(seg.begin(), seg.begin() + static_cast<std::ptrdiff_t>(header));
    fresh.message = fresh.header;
    fresh.first_payload_length = payload_length(seg);
    fresh.deadline = now + kRmppTransferLifetime;
    it = transfers_.emplace(key, std::move(fresh)).first;
  }
  Transfer& t = it->second;
  if (number > t.window_last) {
    return {Kind::ignored, {}, name + " beyond the window ending at " + std::to_string(t.window_last), {}};
  }
  if (number <= t.last_ack || t.joined) return {Kind::ignored, {}, "repeat of " + name + ", ACKed again", ack(t)};
  if (number <= t.in_order || t.held.contains(number)) return {Kind::ignored, {}, "repeat of " + name, {}};
  if (number != t.in_order + 1) {
    t.held.emplace(number, Bytes(seg.begin(), seg.begin() + kMadBytes));
    return {Kind::incomplete, {}, name + " held until segment " + std::to_string(t.in_order + 1) + " comes", {}};
  }

  // The next in order, and whatever it lets follow from the held ones.
  Bytes last(seg.begin(), seg.begin() + kMadBytes);
  for (;;) {
    if (!append(t, last)) {
      const Bytes stop = control_mad(t.header, kRmppTypeStop, kRmppStatusResourcesExhausted);
      transfers_.erase(it);
      return {Kind::dropped, {}, "message longer than " + std::to_string(max_bytes_) + " bytes", stop};
    }
    if (rmpp_flags(last) & kRmppFlagLast) {
      Result done = finish(t, last, now);
      if (done.kind == Kind::dropped) transfers_.erase(it);
      return done;
    }
    auto next = t.held.find(t.in_order + 1);
    if (next == t.held.end()) break;
    last = std::move(next->second);
    t.held.erase(next);
  }
  if (t.in_order != t.window_last) return {};
  t.window_last += window_;
  return {Kind::incomplete, {}, {}, ack(t)};
}

std::vector<Reassembler::Expired> Reassembler::expire(RmppClock::time_point now) {
  std::vector<Expired> expired;
  for (auto it = transfers_.begin(); it != transfers_.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    if (!it->second.joined) {
      expired.push_back({std::get<Source>(it->first),
                         control_mad(it->second.header, kRmppTypeAbort, kRmppStatusTotalTimeTooLong)});
    }
    it = transfers_.erase(it);
  }
  return expired;
}

std::optional<RmppClock::time_point> Reassembler::next_deadline() const {
  std::optional<RmppClock::time_point> next;
  for (const auto& [key, t] : transfers_) {
    if (!next || t.deadline < *next) next = t.deadline;
  }
  return next;
}

std::size_t Reassembler::in_progress() const {
  return static_cast<std::size_t>(std::count_if(transfers_.begin(), transfers_.end(),
                                                [](const auto& entry) { return !entry.second.joined; }));
}

}  // namespace ibat::umad_twin
