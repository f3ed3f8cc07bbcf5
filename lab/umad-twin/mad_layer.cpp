// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The twin's user MAD layer (see mad_layer.h).
#include "mad_layer.h"

#include <arpa/inet.h>
#include <endian.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <rdma/ib_user_mad.h>

#include "raw_io.h"

namespace ibat::umad_twin {
namespace {

constexpr std::uint64_t kLow48 = (std::uint64_t{1} << 48) - 1;
constexpr std::uint32_t kTimedOut = 110;  // ETIMEDOUT, as the kernel reports it
constexpr std::uint8_t kResponseBit = 0x80;
constexpr std::uint32_t kGsiQp = 1;  // RMPP classes are never on QP0

std::uint16_t hi_tid(unsigned file, std::uint32_t agent) { return static_cast<std::uint16_t>(file << 5 | agent); }

ib_user_mad_hdr header_of(const std::uint8_t* umad) {
  ib_user_mad_hdr h;
  std::memcpy(&h, umad, sizeof h);
  return h;
}

void signal_ready(int efd) {
  const std::uint64_t one = 1;
  (void)!raw_write(efd, &one, sizeof one);
}

}  // namespace

MadLayer::WaitKey MadLayer::wait_key(unsigned ca, bool response, std::uint64_t tid_value) {
  return {ca, response, response ? tid_value : tid_value & kLow48};
}

int MadLayer::open_file(unsigned ca, bool nonblocking, bool cloexec) {
  std::lock_guard lock(mutex_);
  // The kernel's answer once the device is gone: ENXIO, from chrdev_open when the cdev is deleted
  // and from ib_umad_open when the port has lost its device (with devtmpfs the node itself soon
  // goes, and a later open reads ENOENT).
  if (removed_.count(ca)) return -ENXIO;
  unsigned number = kMaxFiles;
  for (unsigned i = 0; i < kMaxFiles; ++i) {
    const unsigned candidate = (next_number_ + i) % kMaxFiles;
    if (!files_[candidate]) {
      number = candidate;
      break;
    }
  }
  if (number == kMaxFiles) return -EMFILE;
  const int fd = ::eventfd(0, EFD_SEMAPHORE | (nonblocking ? EFD_NONBLOCK : 0) | (cloexec ? EFD_CLOEXEC : 0));
  if (fd < 0) return -errno;
  auto file = std::make_shared<File>();
  file->fd = fd;
  file->ca = ca;
  file->number = number;
  files_[number] = file;
  file_numbers_[fd] = number;
  next_number_ = (number + 1) % kMaxFiles;  // a late answer for a closed file finds no one
  return fd;
}

void MadLayer::close_file(int fd) {
  std::lock_guard lock(mutex_);
  auto it = file_numbers_.find(fd);
  if (it == file_numbers_.end()) return;
  const unsigned number = it->second;
  std::erase_if(waiting_, [number](const auto& entry) { return entry.second.file == number; });
  files_[number].reset();
  file_numbers_.erase(it);
  raw_close(fd);
}

bool MadLayer::owns(int fd) const {
  std::lock_guard lock(mutex_);
  return file_numbers_.count(fd) != 0;
}

MadLayer::File* MadLayer::file_by_fd(int fd) const {
  auto it = file_numbers_.find(fd);
  return it == file_numbers_.end() ? nullptr : files_[it->second].get();
}

int MadLayer::register_agent(int fd, const AgentSpec& spec) {
  std::lock_guard lock(mutex_);
  File* file = file_by_fd(fd);
  if (!file) return -EBADF;
  if (file->dead) return -EPIPE;  // ib_umad_reg_agent: "invalid device"
  if (spec.qpn > 1) return -EINVAL;
  if (spec.rmpp_version > 1) return -EINVAL;
  for (std::uint32_t id = 0; id < kAgentsPerFile; ++id) {
    if (!file->agents[id]) {
      file->agents[id] = spec;
      return static_cast<int>(id);
    }
  }
  return -ENOMEM;
}

int MadLayer::unregister_agent(int fd, std::uint32_t id) {
  std::lock_guard lock(mutex_);
  File* file = file_by_fd(fd);
  if (!file) return -EBADF;
  if (id >= kAgentsPerFile || !file->agents[id]) return -EINVAL;
  file->agents[id].reset();
  return 0;
}

ssize_t MadLayer::write(int fd, const std::uint8_t* buf, std::size_t count, Clock::time_point now) {
  if (count < kUmadHeaderBytes + kMadHeaderBytes) return -EINVAL;
  const ib_user_mad_hdr hdr = header_of(buf);
  Bytes mad(buf + kUmadHeaderBytes, buf + count);
  std::vector<Outgoing> first;  // what goes on the wire now
  {
    std::lock_guard lock(mutex_);
    File* file = file_by_fd(fd);
    if (!file) return -EBADF;
    if (file->dead) return -EIO;
    if (hdr.id >= kAgentsPerFile || !file->agents[hdr.id]) return -EINVAL;
    const AgentSpec& agent = *file->agents[hdr.id];
    const bool rmpp = agent.rmpp_version != 0 && rmpp_active(mad);
    if (mad.size() > kMadBytes && !rmpp) return -EINVAL;  // the kernel: only RMPP agents send long MADs
    const bool request = !is_response(mad);
    if (request) set_tid(mad, (tid(mad) & ~(std::uint64_t{0xffff} << 32)) | std::uint64_t{hi_tid(file->number, hdr.id)} << 32);
    std::vector<Bytes> segments;
    if (rmpp) {
      segments = segment(mad);
    } else {
      mad.resize(kMadBytes, 0);
      segments.push_back(mad);
    }
    std::vector<SimRequest> datagrams;
    for (const Bytes& seg : segments) {
      SimRequest r{};
      r.dlid = hdr.lid;  // ibsim reads the LID in network order from the low 16 bits
      r.slid = ntohs(hdr.lid) == 0xffff ? hdr.lid : 0;  // 0: ibsim fills in the sender's LID
      r.dqp = hdr.qpn;
      r.sqp = htonl(agent.qpn);
      r.length = htobe64(rmpp ? kMadBytes : count - kUmadHeaderBytes);
      std::memcpy(r.mad, seg.data(), kMadBytes);
      datagrams.push_back(r);
    }
    const unsigned ca = file->ca;
    counters_.sent++;
    if (!rmpp && !(request && hdr.timeout_ms > 0)) {
      counters_.segments_sent++;
      first.push_back({ca, datagrams.front()});
    } else {
      // Kept until its answer, its last ACK or its last timeout; stored before the send, so that a
      // fast answer finds it.
      Waiting w;
      w.file = file->number;
      w.agent = hdr.id;
      if (request) w.timeout = std::chrono::milliseconds(hdr.timeout_ms);
      const std::size_t kept = std::min({mad.size(), count - kUmadHeaderBytes, kMadBytes});  // one MAD at most
      w.umad.resize(kUmadHeaderBytes + kept);
      std::memcpy(w.umad.data(), buf, kUmadHeaderBytes);
      std::copy_n(mad.begin(), kept, w.umad.begin() + kUmadHeaderBytes);
      w.datagrams = std::move(datagrams);
      if (rmpp) {
        w.rmpp.emplace(static_cast<std::uint32_t>(segments.size()), hdr.retries);
        w.ack_wait = rmpp_ack_wait(hdr.timeout_ms);
        const RmppSender::Burst burst = w.rmpp->start();
        counters_.segments_sent += burst.count();
        send_burst(ca, w, burst, now, first);
      } else {
        w.retries_left = hdr.retries;
        w.deadline = now + w.timeout;
        counters_.segments_sent++;
        first.push_back({ca, w.datagrams.front()});
      }
      waiting_[wait_key(ca, !request, tid(mad))] = std::move(w);
    }
  }
  for (const Outgoing& o : first) {
    if (wire_(o.ca, o.request, true) != WireStatus::sent) return -EIO;
  }
  return static_cast<ssize_t>(count);
}

ssize_t MadLayer::read(int fd, std::uint8_t* buf, std::size_t count) {
  std::shared_ptr<File> file;
  {
    std::lock_guard lock(mutex_);
    auto it = file_numbers_.find(fd);
    if (it == file_numbers_.end()) return -EBADF;
    file = files_[it->second];
  }
  if (count < kUmadHeaderBytes) return -EINVAL;
  for (;;) {
    {
      std::lock_guard lock(file->queue_mutex);
      if (file->dead) return -EIO;
      if (!file->queue.empty() && file->queue.front().size() > count) {
        // The kernel: too small a buffer gets the header (its length says what is needed), -ENOSPC,
        // and the MAD stays first in line.
        std::memcpy(buf, file->queue.front().data(), kUmadHeaderBytes);
        return -ENOSPC;
      }
    }
    std::uint64_t ticket = 0;
    if (raw_read(fd, &ticket, sizeof ticket) < 0) return -errno;  // blocks, or EAGAIN, as the fd was opened
    Bytes umad;
    {
      std::lock_guard lock(file->queue_mutex);
      if (file->dead) {
        signal_ready(fd);  // the ticket taken was the death notice: leave it for the next reader and poll
        return -EIO;
      }
      umad = std::move(file->queue.front());
      file->queue.pop_front();
      if (umad.size() > count) {  // another reader took the one we measured: put this one back
        file->queue.push_front(std::move(umad));
        signal_ready(fd);
        continue;
      }
    }
    std::memcpy(buf, umad.data(), umad.size());
    return static_cast<ssize_t>(umad.size());
  }
}

void MadLayer::deliver(File& file, Bytes umad) {
  std::lock_guard lock(file.queue_mutex);
  if (file.queue.size() >= kMaxQueuedPerFile) {
    counters_.queue_full++;
    return;
  }
  file.queue.push_back(std::move(umad));
  signal_ready(file.fd);
}

void MadLayer::deliver_mad(unsigned number, std::uint32_t agent, const SimRequest& from,
                           std::span<const std::uint8_t> mad, std::uint32_t status) {
  File* file = files_[number].get();
  if (!file || !file->agents[agent]) return;
  ib_user_mad_hdr hdr{};
  hdr.id = agent;
  hdr.status = status;
  hdr.length = static_cast<std::uint32_t>(kUmadHeaderBytes + mad.size());
  hdr.qpn = from.sqp;
  hdr.lid = static_cast<std::uint16_t>(from.slid);
  Bytes umad(kUmadHeaderBytes + mad.size());
  std::memcpy(umad.data(), &hdr, sizeof hdr);
  std::copy(mad.begin(), mad.end(), umad.begin() + kUmadHeaderBytes);
  counters_.received++;
  deliver(*file, std::move(umad));
}

std::optional<std::pair<unsigned, std::uint32_t>> MadLayer::request_target(unsigned ca,
                                                                           std::span<const std::uint8_t> mad) const {
  for (const auto& file : files_) {
    if (!file || file->ca != ca) continue;
    for (std::uint32_t id = 0; id < kAgentsPerFile; ++id) {
      const auto& a = file->agents[id];
      if (a && a->mgmt_class == mgmt_class(mad) && a->class_version == mad[2] && a->methods.test(method(mad) & 0x7f)) {
        return std::pair{file->number, id};
      }
    }
  }
  return std::nullopt;
}

void MadLayer::deliver_message(unsigned ca, std::pair<unsigned, std::uint32_t> target, const SimRequest& from,
                               std::span<const std::uint8_t> message) {
  if (is_response(message)) {
    auto w = waiting_.find(wait_key(ca, false, tid(message)));
    if (w == waiting_.end() || w->second.file != target.first || w->second.agent != target.second) {
      counters_.unmatched_responses++;  // nobody waits for it (no timeout, timed out, or a copy)
      return;
    }
    waiting_.erase(w);
  }
  deliver_mad(target.first, target.second, from, message, 0);
}

void MadLayer::reply(unsigned ca, Reassembler::Source to, const Bytes& mad, std::vector<Outgoing>& out) {
  (rmpp_type(mad) == kRmppTypeAck ? counters_.acks_sent : counters_.aborts_sent)++;
  Outgoing o;
  o.ca = ca;
  o.request.dlid = htons(to.lid);
  o.request.slid = 0;
  o.request.dqp = htonl(to.qp);
  o.request.sqp = htonl(kGsiQp);
  o.request.length = htobe64(kMadBytes);
  std::memcpy(o.request.mad, mad.data(), kMadBytes);
  out.push_back(o);
}

void MadLayer::send_burst(unsigned ca, Waiting& w, RmppSender::Burst burst, Clock::time_point now,
                          std::vector<Outgoing>& out) {
  if (burst.empty()) return;
  for (std::uint32_t n = burst.first; n <= burst.last; ++n) out.push_back({ca, w.datagrams[n - 1]});
  w.deadline = now + w.ack_wait;  // the wait for the ACK starts when the window is out
}

void MadLayer::on_rmpp(unsigned ca, std::pair<unsigned, std::uint32_t> target, const SimRequest& from,
                       Clock::time_point now, std::vector<Outgoing>& out) {
  const std::span<const std::uint8_t> mad(from.mad, kMadBytes);
  if (rmpp_type(mad) != kRmppTypeData || rmpp_fault(mad)) {
    on_rmpp_control(ca, from, now, out);
    return;
  }
  if (auto lose = lose_segment_.find(ca); lose != lose_segment_.end() && lose->second == segment_number(mad)) {
    lose_segment_.erase(lose);
    counters_.injected_losses++;
    return;  // as if the wire had dropped it: no ACK, the sender's timer decides
  }
  counters_.segments_received++;
  const Reassembler::Source source{ntohs(static_cast<std::uint16_t>(from.slid)), ntohl(from.sqp)};
  auto result = reassemblers_[ca].add(source, mad, now);
  if (!result.reply.empty()) reply(ca, source, result.reply, out);
  if (result.kind == Reassembler::Result::Kind::dropped) counters_.rmpp_dropped++;
  if (result.kind != Reassembler::Result::Kind::complete) return;
  counters_.reassembled++;
  deliver_message(ca, target, from, result.message);
}

void MadLayer::on_rmpp_control(unsigned ca, const SimRequest& from, Clock::time_point now, std::vector<Outgoing>& out) {
  const std::span<const std::uint8_t> mad(from.mad, kMadBytes);
  const Reassembler::Source source{ntohs(static_cast<std::uint16_t>(from.slid)), ntohl(from.sqp)};
  const std::uint8_t type = rmpp_type(mad);
  const std::optional<std::uint8_t> fault = rmpp_fault(mad);
  if (type == kRmppTypeAck) counters_.acks_received++;
  if (type == kRmppTypeStop || type == kRmppTypeAbort) counters_.aborts_received++;
  // A control MAD comes back the way the data went: the data's R bit is its own, flipped.
  auto it = type == kRmppTypeData ? waiting_.end()
                                  : waiting_.find(wait_key(ca, (method(mad) & kResponseBit) == 0, tid(mad)));
  if (it == waiting_.end() || !it->second.rmpp) {
    if (fault) reply(ca, source, control_mad(mad, kRmppTypeAbort, *fault), out);
    return;  // an ACK of a send already complete, or of none
  }
  Waiting& w = it->second;
  RmppSender::Reaction r;
  if (fault) {
    r = w.rmpp->on_fault(*fault);
  } else if (type == kRmppTypeAck) {
    r = w.rmpp->on_ack(segment_number(mad), payload_length(mad), rmpp_status(mad));
  } else if (type == kRmppTypeStop) {
    r = w.rmpp->on_stop(rmpp_status(mad));
  } else {
    r = w.rmpp->on_abort(rmpp_status(mad));
  }
  if (r.abort) reply(ca, source, control_mad(mad, kRmppTypeAbort, *r.abort), out);
  if (r.ended) {  // the kernel tells user space of a timeout only: an aborted send ends unreported
    waiting_.erase(it);
    return;
  }
  counters_.segments_sent += r.send.count();
  send_burst(ca, w, r.send, now, out);
  if (!r.completed) return;
  if (w.timeout.count() == 0) {
    waiting_.erase(it);  // no answer expected: the last ACK completes the send
  } else {
    w.deadline = now + w.timeout;  // now the wait for the answer
  }
}

void MadLayer::on_packet(unsigned ca, const SimRequest& request, Clock::time_point now) {
  std::vector<Outgoing> out;
  {
    std::lock_guard lock(mutex_);
    const std::span<const std::uint8_t> mad(request.mad, kMadBytes);
    if (ntohl(request.status) != 0) {
      // ibsim hands back a MAD it could not deliver. A real HCA says nothing: the timer decides.
      counters_.bounced++;
      return;
    }
    std::optional<std::pair<unsigned, std::uint32_t>> target;
    const bool response = is_response(mad);
    if (response) {
      const unsigned hi = (tid(mad) >> 32) & 0xffff;
      if (files_[hi >> 5] && files_[hi >> 5]->ca == ca && files_[hi >> 5]->agents[hi & 31]) target = std::pair{hi >> 5, hi & 31u};
    } else {
      target = request_target(ca, mad);
    }
    if (!target) {
      (response ? counters_.unmatched_responses : counters_.undeliverable_requests)++;
      return;
    }
    const AgentSpec& agent = *files_[target->first]->agents[target->second];
    if (agent.rmpp_version != 0 && rmpp_active(mad)) {
      on_rmpp(ca, *target, request, now, out);
    } else {
      deliver_message(ca, *target, request, mad);
    }
  }
  queue_output(std::move(out));
}

void MadLayer::time_out(Waiting& w) {
  counters_.timeouts++;
  File* file = files_[w.file].get();
  if (!file || !file->agents[w.agent]) return;
  ib_user_mad_hdr hdr = header_of(w.umad.data());
  hdr.status = kTimedOut;
  hdr.length = static_cast<std::uint32_t>(w.umad.size());
  std::memcpy(w.umad.data(), &hdr, sizeof hdr);
  deliver(*file, std::move(w.umad));
}

std::optional<MadLayer::Clock::time_point> MadLayer::on_timer(Clock::time_point now) {
  std::vector<Outgoing> out;
  std::optional<Clock::time_point> next;
  {
    std::lock_guard lock(mutex_);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      Waiting& w = it->second;
      const unsigned ca = std::get<0>(it->first);
      if (w.deadline <= now) {
        std::optional<RmppSender::Burst> resend;
        if (w.rmpp) {
          resend = w.rmpp->on_timeout();  // from the segment after the last ACKed; none once all are
        } else if (w.retries_left > 0) {
          w.retries_left--;
          resend = RmppSender::Burst{1, 1};
        }
        if (!resend) {
          time_out(w);
          it = waiting_.erase(it);
          continue;
        }
        counters_.retries++;
        if (w.rmpp) counters_.segments_resent += resend->count();
        for (std::uint32_t n = resend->first; n <= resend->last; ++n) out.push_back({ca, w.datagrams[n - 1]});
        w.deadline = now + (w.rmpp ? w.ack_wait : w.timeout);
      }
      if (!next || w.deadline < *next) next = w.deadline;
      ++it;
    }
    for (auto& [ca, reassembler] : reassemblers_) {
      for (const auto& expired : reassembler.expire(now)) reply(ca, expired.source, expired.abort, out);
      const auto deadline = reassembler.next_deadline();
      if (deadline && (!next || *deadline < *next)) next = deadline;
    }
  }
  // Sent from the receive thread, which must not wait on ibsim (ibsim may itself be waiting for us):
  // what ibsim cannot take now waits in the outbox.
  queue_output(std::move(out));
  return next;
}

void MadLayer::lose_next_segment(unsigned ca, std::uint32_t segment) {
  std::lock_guard lock(mutex_);
  lose_segment_[ca] = segment;
}

void MadLayer::remove_ca(unsigned ca) {
  {
    std::lock_guard lock(mutex_);
    removed_.insert(ca);
    for (const auto& file : files_) {
      if (!file || file->ca != ca) continue;
      file->agents = {};  // unregistered, as ib_umad_kill_port does: nothing more is routed to them
      std::lock_guard queue_lock(file->queue_mutex);
      file->dead = true;
      file->queue.clear();
      signal_ready(file->fd);  // wakes a blocked reader; readable from now on
    }
    std::erase_if(waiting_, [ca](const auto& entry) { return std::get<0>(entry.first) == ca; });
    reassemblers_.erase(ca);
  }
  std::lock_guard lock(outbox_mutex_);
  std::erase_if(outbox_, [ca](const Outgoing& o) { return o.ca == ca; });
}

void MadLayer::add_ca(unsigned ca) {
  std::lock_guard lock(mutex_);
  removed_.erase(ca);
}

bool MadLayer::ca_present(unsigned ca) const {
  std::lock_guard lock(mutex_);
  return removed_.count(ca) == 0;
}

void MadLayer::queue_output(std::vector<Outgoing> batch) {
  if (batch.empty()) return;
  {
    std::lock_guard lock(outbox_mutex_);
    for (Outgoing& o : batch) {
      if (outbox_.size() >= kMaxQueuedOutput) {
        output_full_++;
        continue;
      }
      outbox_.push_back(o);
    }
  }
  flush_output();
}

void MadLayer::flush_output() {
  std::lock_guard lock(outbox_mutex_);
  while (!outbox_.empty()) {
    if (wire_(outbox_.front().ca, outbox_.front().request, false) == WireStatus::busy) return;
    outbox_.pop_front();  // sent, or lost as on a broken link
  }
}

std::optional<unsigned> MadLayer::output_waits_for() const {
  std::lock_guard lock(outbox_mutex_);
  if (outbox_.empty()) return std::nullopt;
  return outbox_.front().ca;
}

Counters MadLayer::counters() const {
  Counters c;
  {
    std::lock_guard lock(mutex_);
    c = counters_;
  }
  std::lock_guard lock(outbox_mutex_);
  c.output_full = output_full_;
  return c;
}

}  // namespace ibat::umad_twin
