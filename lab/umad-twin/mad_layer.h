// The kernel's user MAD layer (drivers/infiniband/core/user_mad.c, mad.c, mad_rmpp.c) as the twin
// gives it to a process: umad files with their agents, the TID rewrite that routes a response back
// to the agent that asked, request dispatch by class, version and method, RMPP for agents
// registered with rmpp_version 1, and the send timeout and retries of a request (ETIMEDOUT to the
// agent when no answer came). A response that matches no waiting request is dropped, as the
// kernel drops it. Below it sits the wire to ibsim (injected, so that tests need no simulator).
#pragma once

#include <array>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "ibsim_link.h"
#include "rmpp.h"

namespace ibat::umad_twin {

inline constexpr std::size_t kUmadHeaderBytes = 64;  // struct ib_user_mad_hdr (ABI 5 with P_Key index)
inline constexpr unsigned kAgentsPerFile = 32;
inline constexpr unsigned kMaxFiles = 2048;  // file number << 5 | agent fits the 16 TID bits ibsim leaves us
inline constexpr std::size_t kMaxQueuedPerFile = 4096;

struct AgentSpec {
  std::uint8_t qpn = 1;
  std::uint8_t mgmt_class = 0;
  std::uint8_t class_version = 0;
  std::bitset<128> methods;  // requests of these methods are delivered to the agent
  std::uint8_t rmpp_version = 0;
};

struct Counters {
  std::uint64_t sent = 0, received = 0, segments_sent = 0, segments_received = 0, reassembled = 0;
  std::uint64_t rmpp_dropped = 0, unmatched_responses = 0, undeliverable_requests = 0, bounced = 0;
  std::uint64_t retries = 0, timeouts = 0, queue_full = 0;
};

class MadLayer {
 public:
  using Clock = std::chrono::steady_clock;
  // Sends one 256-byte MAD datagram on CA `ca`; `may_block` false from the receive thread.
  using Wire = std::function<bool(unsigned ca, const SimRequest& request, bool may_block)>;

  explicit MadLayer(Wire wire) : wire_(std::move(wire)) {}

  // A umad file (open of /dev/infiniband/umad<N>): returns its readiness fd (an eventfd,
  // readable while a MAD waits) or -errno.
  int open_file(unsigned ca, bool nonblocking, bool cloexec);
  void close_file(int fd);
  bool owns(int fd) const;

  int register_agent(int fd, const AgentSpec& spec);  // agent id, or -errno
  int unregister_agent(int fd, std::uint32_t id);
  ssize_t write(int fd, const std::uint8_t* buf, std::size_t count, Clock::time_point now);
  ssize_t read(int fd, std::uint8_t* buf, std::size_t count);

  // A datagram from ibsim on CA `ca`; and the timers: returns when to be called next.
  void on_packet(unsigned ca, const SimRequest& request, Clock::time_point now);
  std::optional<Clock::time_point> on_timer(Clock::time_point now);

  Counters counters() const;

 private:
  struct File {
    int fd = -1;
    unsigned ca = 0;
    unsigned number = 0;
    std::array<std::optional<AgentSpec>, kAgentsPerFile> agents;
    std::mutex queue_mutex;
    std::deque<Bytes> queue;  // whole umads: header + MAD
  };
  struct Waiting {  // a request sent with a timeout, until its answer or its last timeout
    unsigned file = 0;
    std::uint32_t agent = 0;
    Clock::time_point deadline;
    std::chrono::milliseconds timeout{0};
    std::uint32_t retries_left = 0;
    Bytes umad;                        // as written, TID rewritten: resent, and returned on timeout
    std::vector<SimRequest> datagrams;  // what went on the wire
  };
  using WaitKey = std::pair<unsigned, std::uint64_t>;  // CA, low 48 TID bits

  File* file_by_fd(int fd) const;  // caller holds mutex_
  void deliver(File& file, Bytes umad);
  void deliver_mad(unsigned file, std::uint32_t agent, const SimRequest& from, std::span<const std::uint8_t> mad,
                   std::uint32_t status);
  std::optional<std::pair<unsigned, std::uint32_t>> request_target(unsigned ca, std::span<const std::uint8_t> mad) const;

  Wire wire_;
  mutable std::mutex mutex_;
  std::array<std::shared_ptr<File>, kMaxFiles> files_;  // by file number
  std::map<int, unsigned> file_numbers_;                 // fd -> file number
  unsigned next_number_ = 0;
  std::map<WaitKey, Waiting> waiting_;
  std::map<unsigned, Reassembler> reassemblers_;  // per CA
  Clock::time_point last_segment_{};
  Counters counters_;
};

}  // namespace ibat::umad_twin
