// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The connection behind an ibat_t handle: a Unix stream socket speaking native protocol v1 through
// ibat_protocol, a table of pending requests keyed by id, non-blocking reads that dispatch each
// reply frame to its request, and blocking waits for the synchronous calls. Requests sent from a
// reply handler are held and written together when the reading call returns (docs/protocol.md,
// "Batching").
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/spin_policy.h"
#include "kernel/run_queue.h"
#include "protocol/frame_splitter.h"

namespace ibat::client {

// Called for every reply frame of a request (header non-null), or once with header == nullptr
// and a library status when the request fails locally (connection lost, handle closed).
using FrameHandler = std::function<void(std::uint32_t id, int status, const protocol::FrameHeader* header,
                                         std::span<const std::uint8_t> payload)>;

class Session {
 public:
  static constexpr std::size_t kMaxPending = 1024;
  // A daemon that does not read our requests for this long is treated as gone.
  static constexpr int kStallMs = 10000;
  // How long wait() reads without blocking before it sleeps in poll(): a cached answer takes
  // about 10 us, and waking from poll() on an idle CPU took longer (docs/performance.md).
  static constexpr std::chrono::microseconds kSpinBeforeSleep{50};
  // Requests sent from reply handlers are written once this many are held, or when process() ends.
  static constexpr std::size_t kBatchFrames = 64;

  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Connects to `path`; nullptr with errno set on failure.
  static std::unique_ptr<Session> connect(const std::string& path);

  int fd() const { return fd_; }
  bool connected() const { return fd_ >= 0 && !broken_; }
  std::size_t pending() const { return pending_.size(); }
  const std::string& last_message() const { return last_message_; }
  // send(2) calls that wrote something: what batching saves (tests, benchmarks).
  std::uint64_t writes() const { return writes_; }
  // Times wait() slept in poll() (tests).
  std::uint64_t sleeps() const { return sleeps_; }
  // Where wait() samples the host's run queue (tests stand in for /proc/loadavg).
  void set_run_queue_sampler(kernel::RunQueueSampler sampler) { sampler_ = sampler; }

  // Allocates an id, registers `handler` (an empty handler: the reply is not tracked, as for
  // CANCEL), lets `encode` append the request frame and sends it: at once, or, from inside a reply
  // handler, together with the others sent there when process() returns (or once kBatchFrames are
  // held). While the socket is full, replies
  // are read and dispatched so that a daemon applying backpressure cannot deadlock us; so handlers
  // may run inside send(). `streaming`: the request stays pending until a reply frame without MORE.
  // Returns IBAT_OK (the handler will run exactly once, with IBAT_EDISCONNECTED if the write
  // fails), or IBAT_EOVERLOADED / IBAT_EDISCONNECTED (the handler is never called).
  int send(const std::function<void(std::vector<std::uint8_t>&, std::uint32_t id)>& encode,
           FrameHandler handler, bool streaming, std::uint32_t* id_out);
  bool is_pending(std::uint32_t id) const { return pending_.count(id) != 0; }
  // An id for a request answered without the daemon (a shared table hit): never sent, never pending.
  std::uint32_t take_id();
  // Drops the handler of `id` without calling it; later frames for it are ignored.
  void forget(std::uint32_t id);

  // Reads what is available without blocking and dispatches it. IBAT_OK or IBAT_EDISCONNECTED.
  int process();
  // Blocks (poll) until done() is true, the connection ends (IBAT_EDISCONNECTED) or timeout_ms
  // passes (IBAT_ETIMEOUT; negative: no limit). IBAT_EARG when called from inside a reply
  // handler: the reads of the outer process() are not finished.
  int wait(const std::function<bool()>& done, int timeout_ms = -1);

  // Fails every pending request with `status` exactly once (used on close and on disconnect).
  void fail_all(int status);

 private:
  explicit Session(int fd) : fd_(fd) {}
  int read_available();
  // Writes out_ completely (see send()); false once the connection is broken.
  bool flush();
  void dispatch(const protocol::FrameHeader& header, std::span<const std::uint8_t> payload);
  void disconnect(std::string message);

  struct Pending {
    FrameHandler handler;
    bool streaming;
  };
  int fd_;
  bool broken_ = false;
  bool reading_ = false;  // inside process(): handlers run, blocking waits are refused
  std::uint32_t next_id_ = 1;
  protocol::FrameSplitter splitter_;
  std::unordered_map<std::uint32_t, Pending> pending_;
  std::string last_message_;
  std::vector<std::uint8_t> out_;  // frames not yet written, whole frames only
  std::size_t out_sent_ = 0;
  std::size_t held_ = 0;  // frames in out_ not yet handed to flush()
  bool flushing_ = false;
  std::uint64_t writes_ = 0;
  std::uint64_t sleeps_ = 0;
  core::SpinPolicy spin_;  // whether wait() may read before it sleeps
  kernel::RunQueueSampler sampler_ = kernel::sample_run_queue;
};

}  // namespace ibat::client
