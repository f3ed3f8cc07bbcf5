// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel's user MAD layer (drivers/infiniband/core/user_mad.c, mad.c, mad_rmpp.c) as the twin
// gives it to a process: umad files with their agents, the TID rewrite that routes a response back
// to the agent that asked, request dispatch by class, version and method, the send timeout and
// retries of a request (ETIMEDOUT to the agent when no answer came), and RMPP for agents
// registered with rmpp_version 1: a long message goes out in segments as the receiver's ACKs open
// its window, is resent from the last ACKed segment when an ACK is late, and ends in ETIMEDOUT
// when the retries run out; received segments are joined and ACKed (rmpp_window.h). ACK, STOP and
// ABORT MADs are the layer's own, never handed to the program. A response that matches no waiting
// request is dropped, as the kernel drops it. Below it sits the wire to ibsim (injected, so that
// tests need no simulator); what the wire cannot take now waits in an outbox, as the kernel queues
// sends while its send queue is full.
//
// A CA can go away and come back (remove_ca, add_ca), as ib_umad_kill_port and a new umad port do
// it: every umad file open on a removed CA is dead for good — read and write fail with EIO, agent
// registration with EPIPE (the kernel's ib_umad_reg_agent once the port has lost its device), its
// agents are gone (unregistering one: EINVAL), the MADs it had queued are dropped, and so are the
// sends on that CA still waiting for an answer, an ACK or the outbox, without a word to anyone. A
// dead file's eventfd stays readable, so that a reader blocked in poll or read wakes up and reads
// EIO: the kernel's poll returns EPOLLERR for it, which an eventfd cannot, so readable is the
// twin's way to the same end. A file opened after add_ca is alive; one that died stays dead.
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
#include <set>
#include <tuple>
#include <vector>

#include "ibsim_link.h"
#include "rmpp.h"
#include "rmpp_window.h"

namespace ibat::umad_twin {

inline constexpr std::size_t kUmadHeaderBytes = 64;  // struct ib_user_mad_hdr (ABI 5 with P_Key index)
inline constexpr unsigned kAgentsPerFile = 32;
inline constexpr unsigned kMaxFiles = 2048;  // file number << 5 | agent fits the 16 TID bits ibsim leaves us
inline constexpr std::size_t kMaxQueuedPerFile = 4096;
inline constexpr std::size_t kMaxQueuedOutput = 4096;  // datagrams waiting for ibsim's queue to have room

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
  std::uint64_t acks_sent = 0, acks_received = 0, segments_resent = 0, aborts_sent = 0, aborts_received = 0;
  std::uint64_t output_full = 0;
  std::uint64_t injected_losses = 0;  // segments lost by lose_next_segment
};

// What one datagram to ibsim came to: sent; busy (ibsim's queue is full: try again when the socket
// is writable); failed (lost).
enum class WireStatus { sent, busy, failed };

class MadLayer {
 public:
  using Clock = std::chrono::steady_clock;
  // Sends one 256-byte MAD datagram on CA `ca`; `may_block` false from the receive thread.
  using Wire = std::function<WireStatus(unsigned ca, const SimRequest& request, bool may_block)>;

  explicit MadLayer(Wire wire) : wire_(std::move(wire)) {}

  // A umad file (open of /dev/infiniband/umad<N>): returns its readiness fd (an eventfd,
  // readable while a MAD waits, or once the file is dead) or -errno: -ENXIO while `ca` is removed.
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

  // CA `ca` going away (its files die, see above) and coming back (opens work again).
  void remove_ca(unsigned ca);
  void add_ca(unsigned ca);
  bool ca_present(unsigned ca) const;
  // A fault for tests: the next RMPP DATA segment numbered `segment` that reaches CA `ca` is lost
  // on the wire (counted in injected_losses), once; the sender's ACK timeout then resends it.
  void lose_next_segment(unsigned ca, std::uint32_t segment);

  // The outbox (receive thread only): the CA whose socket must become writable before the next
  // datagram can go, and the call to make when it has.
  std::optional<unsigned> output_waits_for() const;
  void flush_output();

  Counters counters() const;

 private:
  struct File {
    int fd = -1;
    unsigned ca = 0;
    unsigned number = 0;
    std::array<std::optional<AgentSpec>, kAgentsPerFile> agents;
    std::mutex queue_mutex;
    std::deque<Bytes> queue;  // whole umads: header + MAD
    bool dead = false;        // its CA was removed; set under both mutex_ and queue_mutex
  };
  struct Waiting {  // a send until its answer, its last ACK or its last timeout
    unsigned file = 0;
    std::uint32_t agent = 0;
    Clock::time_point deadline;
    std::chrono::milliseconds timeout{0};  // for the answer; 0: none is expected
    std::uint32_t retries_left = 0;        // resends of a single MAD
    Bytes umad;                            // as written, TID rewritten: returned on timeout
    std::vector<SimRequest> datagrams;     // the MAD, or its segments (segment n at n - 1)
    std::optional<RmppSender> rmpp;
    std::chrono::milliseconds ack_wait{0};
  };
  // CA, whether the send is a response, its TID: the low 48 bits of a request's (ibsim writes its
  // client id into the top 16), a response's whole.
  using WaitKey = std::tuple<unsigned, bool, std::uint64_t>;
  static WaitKey wait_key(unsigned ca, bool response, std::uint64_t tid_value);
  struct Outgoing {
    unsigned ca = 0;
    SimRequest request{};
  };

  File* file_by_fd(int fd) const;  // caller holds mutex_
  void deliver(File& file, Bytes umad);
  void deliver_mad(unsigned file, std::uint32_t agent, const SimRequest& from, std::span<const std::uint8_t> mad,
                   std::uint32_t status);
  std::optional<std::pair<unsigned, std::uint32_t>> request_target(unsigned ca, std::span<const std::uint8_t> mad) const;
  void deliver_message(unsigned ca, std::pair<unsigned, std::uint32_t> target, const SimRequest& from,
                       std::span<const std::uint8_t> message);
  void on_rmpp(unsigned ca, std::pair<unsigned, std::uint32_t> target, const SimRequest& from, Clock::time_point now,
               std::vector<Outgoing>& out);
  void on_rmpp_control(unsigned ca, const SimRequest& from, Clock::time_point now, std::vector<Outgoing>& out);
  void reply(unsigned ca, Reassembler::Source to, const Bytes& mad, std::vector<Outgoing>& out);
  void send_burst(unsigned ca, Waiting& w, RmppSender::Burst burst, Clock::time_point now, std::vector<Outgoing>& out);
  void time_out(Waiting& w);
  void queue_output(std::vector<Outgoing> batch);

  Wire wire_;
  mutable std::mutex mutex_;
  std::array<std::shared_ptr<File>, kMaxFiles> files_;  // by file number
  std::map<int, unsigned> file_numbers_;                 // fd -> file number
  unsigned next_number_ = 0;
  std::map<WaitKey, Waiting> waiting_;
  std::map<unsigned, Reassembler> reassemblers_;  // per CA
  std::set<unsigned> removed_;                    // CAs whose umad device is gone
  std::map<unsigned, std::uint32_t> lose_segment_;  // CA -> the DATA segment number to lose next
  Counters counters_;
  mutable std::mutex outbox_mutex_;
  std::deque<Outgoing> outbox_;
  std::uint64_t output_full_ = 0;  // under outbox_mutex_
};

}  // namespace ibat::umad_twin
