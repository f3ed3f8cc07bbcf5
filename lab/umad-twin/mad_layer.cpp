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
constexpr std::uint32_t kTimedOut = 110;                  // ETIMEDOUT, as the kernel reports it
constexpr auto kStaleReassembly = std::chrono::seconds(10);  // a message whose segments stopped coming

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

int MadLayer::open_file(unsigned ca, bool nonblocking, bool cloexec) {
  std::lock_guard lock(mutex_);
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
  std::vector<SimRequest> datagrams;
  unsigned ca = 0;
  {
    std::lock_guard lock(mutex_);
    File* file = file_by_fd(fd);
    if (!file) return -EBADF;
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
    ca = file->ca;
    counters_.sent++;
    counters_.segments_sent += datagrams.size();
    if (request && hdr.timeout_ms > 0) {
      Waiting w;
      w.file = file->number;
      w.agent = hdr.id;
      w.timeout = std::chrono::milliseconds(hdr.timeout_ms);
      w.deadline = now + w.timeout;
      w.retries_left = hdr.retries;
      w.umad.assign(buf, buf + kUmadHeaderBytes);
      w.umad.insert(w.umad.end(), mad.begin(), mad.begin() + static_cast<std::ptrdiff_t>(std::min(mad.size(), count - kUmadHeaderBytes)));
      w.datagrams = datagrams;
      waiting_[{ca, tid(mad) & kLow48}] = std::move(w);  // before the send: a fast answer finds it
    }
  }
  for (const SimRequest& r : datagrams) {
    if (!wire_(ca, r, true)) return -EIO;
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

void MadLayer::on_packet(unsigned ca, const SimRequest& request, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  const std::span<const std::uint8_t> mad(request.mad, kMadBytes);
  if (ntohl(request.status) != 0) {
    // ibsim hands back a MAD it could not deliver. A real HCA says nothing: the timer decides.
    counters_.bounced++;
    return;
  }
  std::optional<std::pair<unsigned, std::uint32_t>> target;
  const bool response = is_response(mad);
  const std::uint64_t key = tid(mad) & kLow48;
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
  Bytes whole;
  std::span<const std::uint8_t> message = mad;
  if (agent.rmpp_version != 0 && rmpp_active(mad)) {
    counters_.segments_received++;
    last_segment_ = now;
    auto result = reassemblers_[ca].add(static_cast<std::uint16_t>(ntohs(static_cast<std::uint16_t>(request.slid))), mad);
    if (result.kind == Reassembler::Result::Kind::dropped) counters_.rmpp_dropped++;
    if (result.kind != Reassembler::Result::Kind::complete) return;
    counters_.reassembled++;
    whole = std::move(result.message);
    message = whole;
  }
  if (response) {
    auto w = waiting_.find({ca, key});
    if (w == waiting_.end() || w->second.file != target->first || w->second.agent != target->second) {
      counters_.unmatched_responses++;  // nobody waits for it (no timeout, timed out, or a copy)
      return;
    }
    waiting_.erase(w);
  }
  deliver_mad(target->first, target->second, request, message, 0);
}

std::optional<MadLayer::Clock::time_point> MadLayer::on_timer(Clock::time_point now) {
  std::vector<std::pair<unsigned, SimRequest>> resend;
  std::optional<Clock::time_point> next;
  {
    std::lock_guard lock(mutex_);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      Waiting& w = it->second;
      if (w.deadline <= now) {
        if (w.retries_left > 0) {
          w.retries_left--;
          w.deadline = now + w.timeout;
          counters_.retries++;
          for (const SimRequest& r : w.datagrams) resend.emplace_back(it->first.first, r);
        } else {
          counters_.timeouts++;
          File* file = files_[w.file].get();
          if (file && file->agents[w.agent]) {
            ib_user_mad_hdr hdr = header_of(w.umad.data());
            hdr.status = kTimedOut;
            hdr.length = static_cast<std::uint32_t>(w.umad.size());
            std::memcpy(w.umad.data(), &hdr, sizeof hdr);
            deliver(*file, std::move(w.umad));
          }
          it = waiting_.erase(it);
          continue;
        }
      }
      if (!next || w.deadline < *next) next = w.deadline;
      ++it;
    }
    bool partial = false;
    for (auto& [ca, r] : reassemblers_) partial = partial || r.in_progress() > 0;
    if (partial) {
      if (now - last_segment_ >= kStaleReassembly) {
        for (auto& [ca, r] : reassemblers_) r.clear();
      } else if (!next || last_segment_ + kStaleReassembly < *next) {
        next = last_segment_ + kStaleReassembly;
      }
    }
  }
  // A resend from the receive thread must not wait on ibsim, which may itself be waiting for us.
  for (const auto& [ca, r] : resend) wire_(ca, r, false);
  return next;
}

Counters MadLayer::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

}  // namespace ibat::umad_twin
