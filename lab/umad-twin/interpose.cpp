// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libibat_umad_twin.so: the lab's twin of the kernel's MAD layer, preloaded (LD_PRELOAD) into every
// lab process in place of Debian's libumad2sim. It replaces the libc calls libibumad makes at the
// kernel boundary — open/close/read/write/ioctl of /dev/infiniband/umad<N> and issm<N>, and the
// opendir/scandir/open of /sys/class/infiniband{,_mad} — and attaches each CA the process is given
// to ibsim as a client of its own. A umad descriptor is a real one (an eventfd readable while a MAD
// waits), so poll/epoll need no help. A CA can be removed and added while the process runs, as the
// kernel shows it: its sysfs entries go, its open umad files die (mad_layer.h), opens fail, and the
// kernel's uevents reach every NETLINK_KOBJECT_UEVENT socket of the process — such a socket is
// the twin's (socket/bind/setsockopt/close interposed, uevent.h); other sockets are libc's.
// Configuration (set by lab/ibat-lab):
//   IBAT_TWIN_CAS="<ca>=<ibsim node>[@<simulator socket name>],..."  the CAs, umad0.. in this order
//                  (unset: one CA "ibsim0" at $SIM_HOST, as umad2sim)
//   IBSIM_SOCKNAME the simulator of CAs without @; SIM_SET_ISSM=1 attach as an SM (traps reach us)
//   IBAT_TWIN_SYSFS_DIR where the fake sysfs goes (sys-<pid>/, removed at exit; default $TMPDIR or /tmp)
//   IBAT_TWIN_STATS  a file the twin writes its counters to (one JSON object) when the process exits
//   IBAT_TWIN_VERBS=0 no verbs devices (a host without HCA events: ibatd then polls); otherwise
//                  each CA is also a verbs device that raises the HCA's async events (verbs_devices.h)
//   IBAT_TWIN_EVENTS_DIR where the twins of one machine's fabrics tell each other of ClientReregister
//                  Sets (port_event_bus.h); unset: no CLIENT_REREGISTER events
//   IBAT_TWIN_CONTROL a FIFO (made if missing, removed at exit if made) of "remove <ca>" / "add <ca>"
//                  lines, each answered by the line appended to <path>.done (hotplug.h). Lines
//                  already in it when the twin starts are carried out before the program's first
//                  IB call returns, so a process can start with a CA absent. Give it to one
//                  process only: processes sharing the FIFO would take each other's lines.
#include <dirent.h>
#include <endian.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <mutex>
#include <rdma/ib_user_mad.h>
#include <rdma/rdma_user_ioctl.h>
#include <string>
#include <thread>
#include <vector>

#include "fake_sysfs.h"
#include "hotplug.h"
#include "ibsim_link.h"
#include "mad_layer.h"
#include "port_event_bus.h"
#include "raw_io.h"
#include "sma_watch.h"
#include "uevent.h"
#include "verbs_devices.h"

namespace ibat::umad_twin {
namespace {

constexpr int kMaxTrackedFd = 65536;
// How stale a port's attributes may be: sysfs files are re-read from ibsim at most this often, and a
// port with an open verbs context is compared with ibsim's PortInfo this often (its events' delay).
constexpr auto kPortRefresh = std::chrono::milliseconds(50);
constexpr const char* kDevDir = "/dev/infiniband/";

template <typename F>
F next_symbol(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

struct CaConfig {
  std::string name, node, sockname;
};

std::vector<CaConfig> parse_cas() {
  std::vector<CaConfig> cas;
  const char* sock_env = std::getenv("IBSIM_SOCKNAME");
  const std::string default_sock = sock_env && *sock_env ? sock_env : "sim";
  const char* list = std::getenv("IBAT_TWIN_CAS");
  if (!list || !*list) {
    const char* host = std::getenv("SIM_HOST");
    cas.push_back({"ibsim0", host ? host : "", default_sock});
    return cas;
  }
  std::string text = list;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq >= 20) {
      std::fprintf(stderr, "ibat-umad-twin: IBAT_TWIN_CAS item '%s' is not <ca>=<node>[@<socket>] "
                   "(a CA name of 1-19 characters); skipped\n", item.c_str());
      continue;
    }
    CaConfig ca{item.substr(0, eq), item.substr(eq + 1), default_sock};
    if (const std::size_t at = ca.node.find('@'); at != std::string::npos) {
      ca.sockname = ca.node.substr(at + 1);
      ca.node.resize(at);
    }
    cas.push_back(ca);
  }
  return cas;
}

// Everything the twin holds for the life of the process, made at its first use of an IB path.
class Twin {
 public:
  Twin() : sysfs_(sysfs_root()), layer_([this](unsigned ca, const SimRequest& r, bool block) { return send(ca, r, block); }) {
    const auto configs = parse_cas();
    const bool issm = std::getenv("SIM_SET_ISSM") != nullptr;
    sysfs_.write_abi();
    for (std::size_t k = 0; k < configs.size(); ++k) {
      const auto& c = configs[k];
      const auto id = static_cast<std::uint32_t>(::getpid()) + static_cast<std::uint32_t>(k) * kPidSpan;
      try {
        auto link = std::make_unique<IbsimLink>(c.sockname, c.node, id, issm);
        CaRecords rec;
        rec.name = c.name;
        rec.umad = static_cast<unsigned>(cas_.size());
        rec.node_info = link->node_info();
        rec.port_info = link->port_info();
        rec.pkeys = link->pkeys();
        sysfs_.write_ca(rec);
        cas_.push_back(std::move(rec));
        links_.push_back(std::move(link));
        refreshed_.push_back(std::chrono::steady_clock::now());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ibat-umad-twin: CA %s not attached: %s\n", c.name.c_str(), e.what());
      }
    }
    present_.assign(cas_.size(), true);
    open_port_events(configs);
    if (const char* control = std::getenv("IBAT_TWIN_CONTROL"); control && *control) {
      try {
        control_ = std::make_unique<ControlFifo>(control);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ibat-umad-twin: IBAT_TWIN_CONTROL: %s; CAs cannot be removed or added\n", e.what());
      }
      if (control_) on_control();  // what a test wrote before the process started
    }
    wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    receiver_ = std::thread([this] { receive_loop(); });
  }

  ~Twin() {
    stopping_ = true;
    const std::uint64_t one = 1;
    (void)!raw_write(wake_, &one, sizeof one);
    if (receiver_.joinable()) receiver_.join();
    write_stats();
    links_.clear();  // detaches every CA from ibsim
    sysfs_.remove();
    raw_close(wake_);
  }

  MadLayer& layer() { return layer_; }
  VerbsDevices* verbs() { return verbs_.get(); }
  const FakeSysfs& sysfs() const { return sysfs_; }

  int ca_of_device(const char* path, const char* kind) const {
    const std::string prefix = std::string(kDevDir) + kind;
    if (std::strncmp(path, prefix.c_str(), prefix.size()) != 0) return -1;
    char* end = nullptr;
    const long n = std::strtol(path + prefix.size(), &end, 10);
    if (end == path + prefix.size() || *end != '\0' || n < 0 || n >= static_cast<long>(cas_.size())) return -1;
    return static_cast<int>(n);
  }

  // Before a read of a CA's port attributes: ibsim's current LID, SM LID and state.
  void refresh_for(const char* path) {
    for (std::size_t k = 0; k < cas_.size(); ++k) {
      const std::string dir = "/sys/class/infiniband/" + cas_[k].name + "/ports";
      if (std::strncmp(path, dir.c_str(), dir.size()) != 0) continue;
      std::lock_guard lock(sysfs_mutex_);
      if (!present_[k]) return;  // removed: its files stay gone
      const auto now = std::chrono::steady_clock::now();
      if (now - refreshed_[k] < kPortRefresh && path[dir.size()] != '\0') return;
      try {
        const auto port_info = links_[k]->port_info();
        const auto pkeys = links_[k]->pkeys();
        refreshed_[k] = now;
        if (port_info == cas_[k].port_info && pkeys == cas_[k].pkeys) return;  // files still true
        cas_[k].port_info = port_info;
        cas_[k].pkeys = pkeys;
        sysfs_.write_port(cas_[k]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ibat-umad-twin: cannot refresh CA %s: %s\n", cas_[k].name.c_str(), e.what());
      }
      return;
    }
  }

  void set_issm(unsigned ca, bool on) {
    try {
      links_[ca]->set_issm(on);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ibat-umad-twin: IsSM on CA %s: %s\n", cas_[ca].name.c_str(), e.what());
    }
  }

  void wake() {
    const std::uint64_t one = 1;
    (void)!raw_write(wake_, &one, sizeof one);
  }

 private:
  // The verbs devices (unless IBAT_TWIN_VERBS=0) and each CA's port event socket (when
  // IBAT_TWIN_EVENTS_DIR is set). `configs`: those of the CAs attached, in order.
  void open_port_events(const std::vector<CaConfig>& configs) {
    std::vector<std::string> names;
    for (const CaRecords& ca : cas_) names.push_back(ca.name);
    const char* verbs = std::getenv("IBAT_TWIN_VERBS");
    if (!verbs || std::strcmp(verbs, "0") != 0) verbs_ = std::make_unique<VerbsDevices>(names);
    watch_.resize(cas_.size());
    const char* dir = std::getenv("IBAT_TWIN_EVENTS_DIR");
    if (dir && *dir) events_dir_ = dir;
    for (const CaConfig& c : configs) {
      const auto it = std::find_if(cas_.begin(), cas_.end(), [&](const CaRecords& r) { return r.name == c.name; });
      if (it == cas_.end()) continue;
      socknames_.push_back(c.sockname);
      std::unique_ptr<PortEventBus> bus;
      if (!events_dir_.empty()) {
        const auto id = static_cast<std::uint32_t>(::getpid()) + static_cast<std::uint32_t>(buses_.size()) * kPidSpan;
        try {
          bus = std::make_unique<PortEventBus>(events_dir_, c.sockname, port_guid(*it), id);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "ibat-umad-twin: CA %s gets no CLIENT_REREGISTER events: %s\n", c.name.c_str(), e.what());
        }
      }
      buses_.push_back(std::move(bus));
    }
  }

  // The ports with an open verbs context: their PortInfo and P_Key table as ibsim has them now,
  // against the last look, raised as the HCA's events (the first look after an open sets the base).
  void watch_ports() {
    if (!verbs_) return;
    for (std::size_t k = 0; k < cas_.size(); ++k) {
      if (!verbs_->watched(static_cast<unsigned>(k)) || !present_[k]) {
        watch_[k].reset();
        continue;
      }
      PortLook look;
      try {
        look = {links_[k]->port_info(), links_[k]->pkeys()};
      } catch (const std::exception& e) {
        continue;  // ibsim gone: the fabric is going down
      }
      if (watch_[k]) {
        for (const ibv_event_type type : port_changes(watch_[k]->port, look.port, watch_[k]->pkeys, look.pkeys)) {
          verbs_->raise(static_cast<unsigned>(k), type, static_cast<int>(port_number(cas_[k])));
        }
      }
      watch_[k] = look;
    }
  }

  // The SM's twin says CA k's SMA took a ClientReregister: what changed with it first (its LID,
  // its SM), then CLIENT_REREGISTER, on every open context of the CA.
  void on_client_reregister(std::size_t k) {
    if (!verbs_ || !verbs_->watched(static_cast<unsigned>(k))) return;
    watch_ports();
    verbs_->raise(static_cast<unsigned>(k), IBV_EVENT_CLIENT_REREGISTER, static_cast<int>(port_number(cas_[k])));
  }

  static std::string sysfs_root() {
    const char* dir = std::getenv("IBAT_TWIN_SYSFS_DIR");
    if (!dir || !*dir) dir = std::getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    return std::string(dir) + "/sys-" + std::to_string(::getpid());
  }

  void write_stats() const {
    const char* path = std::getenv("IBAT_TWIN_STATS");
    if (!path || !*path) return;
    const Counters c = layer_.counters();
    if (FILE* f = std::fopen(path, "w")) {
      std::fprintf(f,
                   "{\"cas\": %zu, \"sent\": %llu, \"received\": %llu, \"segments_sent\": %llu, "
                   "\"segments_received\": %llu, \"reassembled\": %llu, \"rmpp_dropped\": %llu, "
                   "\"unmatched_responses\": %llu, \"undeliverable_requests\": %llu, \"bounced\": %llu, "
                   "\"retries\": %llu, \"timeouts\": %llu, \"queue_full\": %llu, \"acks_sent\": %llu, "
                   "\"acks_received\": %llu, \"segments_resent\": %llu, \"aborts_sent\": %llu, "
                   "\"aborts_received\": %llu, \"output_full\": %llu, \"injected_losses\": %llu, "
                   "\"verbs_events\": %llu}\n",
                   cas_.size(), static_cast<unsigned long long>(c.sent), static_cast<unsigned long long>(c.received),
                   static_cast<unsigned long long>(c.segments_sent), static_cast<unsigned long long>(c.segments_received),
                   static_cast<unsigned long long>(c.reassembled), static_cast<unsigned long long>(c.rmpp_dropped),
                   static_cast<unsigned long long>(c.unmatched_responses),
                   static_cast<unsigned long long>(c.undeliverable_requests), static_cast<unsigned long long>(c.bounced),
                   static_cast<unsigned long long>(c.retries), static_cast<unsigned long long>(c.timeouts),
                   static_cast<unsigned long long>(c.queue_full), static_cast<unsigned long long>(c.acks_sent),
                   static_cast<unsigned long long>(c.acks_received), static_cast<unsigned long long>(c.segments_resent),
                   static_cast<unsigned long long>(c.aborts_sent), static_cast<unsigned long long>(c.aborts_received),
                   static_cast<unsigned long long>(c.output_full), static_cast<unsigned long long>(c.injected_losses),
                   static_cast<unsigned long long>(verbs_ ? verbs_->raised() : 0));
      std::fclose(f);
    }
  }

  WireStatus send(unsigned ca, const SimRequest& r, bool may_block) {
    if (ca >= links_.size()) return WireStatus::failed;
    sma_.on_send(r.mad);
    if (::send(links_[ca]->data_fd(), &r, sizeof r, may_block ? 0 : MSG_DONTWAIT) == static_cast<ssize_t>(sizeof r)) {
      return WireStatus::sent;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK ? WireStatus::busy : WireStatus::failed;
  }

  void receive_loop() {
    const std::size_t links = links_.size();
    std::vector<pollfd> fds;  // the CAs' data sockets, wake_, the control FIFO
    for (const auto& link : links_) fds.push_back({link->data_fd(), POLLIN, 0});
    fds.push_back({wake_, POLLIN, 0});
    if (control_) fds.push_back({control_->fd(), POLLIN, 0});
    const std::size_t first_bus = fds.size();
    for (const auto& bus : buses_) fds.push_back({bus ? bus->fd() : -1, POLLIN, 0});
    std::optional<std::chrono::steady_clock::time_point> next;
    auto next_watch = std::chrono::steady_clock::now();
    while (!stopping_) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= next_watch) {
        watch_ports();
        next_watch = now + kPortRefresh;
      }
      std::optional<std::chrono::steady_clock::time_point> wake_at = next;
      if (verbs_ && std::any_of(watch_.begin(), watch_.end(), [](const auto& w) { return w.has_value(); }) ) {
        wake_at = wake_at ? std::min(*wake_at, next_watch) : next_watch;
      }
      int wait_ms = -1;
      if (wake_at) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(*wake_at - std::chrono::steady_clock::now());
        wait_ms = static_cast<int>(std::max<long>(0, left.count()));
      }
      // A datagram ibsim could not take yet (its queue holds max_dgram_qlen): wait until it can.
      const std::optional<unsigned> blocked = layer_.output_waits_for();
      for (std::size_t k = 0; k < links; ++k) fds[k].events = blocked == k ? POLLIN | POLLOUT : POLLIN;
      if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) break;
      if (blocked && *blocked < links && (fds[*blocked].revents & (POLLOUT | POLLERR | POLLHUP))) layer_.flush_output();
      for (std::size_t k = 0; k < links; ++k) {
        if (!(fds[k].revents & POLLIN)) continue;
        SimRequest r;
        while (::recv(fds[k].fd, &r, sizeof r, MSG_DONTWAIT) == static_cast<ssize_t>(sizeof r)) {
          if (const auto guid = sma_.on_receive(r.mad); guid && !events_dir_.empty()) {
            PortEventBus::announce(events_dir_, socknames_[k], *guid);
          }
          layer_.on_packet(static_cast<unsigned>(k), r, std::chrono::steady_clock::now());
        }
      }
      if (fds[links].revents & POLLIN) {
        std::uint64_t drained;
        (void)!raw_read(wake_, &drained, sizeof drained);
      }
      if (control_ && (fds[links + 1].revents & POLLIN)) on_control();
      for (std::size_t k = 0; k < buses_.size(); ++k) {
        if (!(fds[first_bus + k].revents & POLLIN)) continue;
        if (!buses_[k]->receive().empty()) on_client_reregister(k);
      }
      next = layer_.on_timer(std::chrono::steady_clock::now());
    }
  }

  // The control FIFO's new lines (hotplug.h), each answered in <path>.done once carried out.
  void on_control() {
    for (const std::string& line : control_->read_lines()) {
      std::string error;
      if (const auto command = parse_control(line, error)) {
        apply(*command);
      } else {
        std::fprintf(stderr, "ibat-umad-twin: %s: '%s': %s; ignored\n", control_->path().c_str(), line.c_str(),
                     error.c_str());
      }
      control_->done(line);
    }
  }

  // remove: the CA's sysfs entries go, then its umad files die, then the uevents; add: fresh records
  // from its ibsim link (attached all along) in sysfs, opens work again, then the uevents. So a
  // program that reacts to a uevent finds the CA as the uevent says. Removing an absent CA or
  // adding a present one changes nothing.
  void apply(const ControlCommand& command) {
    const auto it = std::find_if(cas_.begin(), cas_.end(), [&](const CaRecords& r) { return r.name == command.ca; });
    if (it == cas_.end()) {
      std::fprintf(stderr, "ibat-umad-twin: %s: no CA named %s in this process (IBAT_TWIN_CAS); ignored\n",
                   control_->path().c_str(), command.ca.c_str());
      return;
    }
    const auto k = static_cast<std::size_t>(it - cas_.begin());
    if (command.verb == ControlCommand::Verb::lose_segment) {
      layer_.lose_next_segment(cas_[k].umad, command.segment);
      return;
    }
    const bool add = command.verb == ControlCommand::Verb::add;
    {
      std::lock_guard lock(sysfs_mutex_);
      if (present_[k] == add) return;
      if (add) {
        try {
          cas_[k].node_info = links_[k]->node_info();
          cas_[k].port_info = links_[k]->port_info();
          cas_[k].pkeys = links_[k]->pkeys();
          sysfs_.write_ca(cas_[k]);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "ibat-umad-twin: add %s failed: %s; it stays removed\n", command.ca.c_str(), e.what());
          return;
        }
        refreshed_[k] = std::chrono::steady_clock::now();
      } else {
        sysfs_.remove_ca(cas_[k]);
      }
      present_[k] = add;
    }
    const unsigned umad = cas_[k].umad;
    if (add) {
      layer_.add_ca(umad);
    } else {
      layer_.remove_ca(umad);
    }
    const auto events = ca_uevents(add ? "add" : "remove", cas_[k].name, umad, seqnum_);
    for (const std::string& event : events) uevent_sockets().broadcast(event);
    seqnum_ += events.size();
  }

  struct PortLook {
    std::array<std::uint8_t, 64> port{};
    std::array<std::uint8_t, 64> pkeys{};
  };

  std::vector<CaRecords> cas_;
  std::vector<std::unique_ptr<IbsimLink>> links_;
  SmaWatch sma_;                          // every MAD sent and received (the SM's process acts on it)
  std::unique_ptr<VerbsDevices> verbs_;  // null: IBAT_TWIN_VERBS=0
  std::string events_dir_;                // IBAT_TWIN_EVENTS_DIR
  std::vector<std::string> socknames_;    // each CA's simulator
  std::vector<std::unique_ptr<PortEventBus>> buses_;  // each CA's (null without IBAT_TWIN_EVENTS_DIR)
  std::vector<std::optional<PortLook>> watch_;        // receive thread only: each watched port's last look
  std::vector<std::chrono::steady_clock::time_point> refreshed_;
  std::vector<bool> present_;  // not removed through the control FIFO; under sysfs_mutex_
  std::mutex sysfs_mutex_;     // the fake sysfs and the CA records it is written from
  FakeSysfs sysfs_;
  MadLayer layer_;
  int wake_ = -1;
  std::unique_ptr<ControlFifo> control_;
  std::uint64_t seqnum_ = 1;  // SEQNUM of the next uevent (used by the constructor, then the receive thread)
  std::atomic<bool> stopping_{false};
  std::thread receiver_;
};

std::atomic<bool> tracked[kMaxTrackedFd];  // our descriptors: umad files and issm files
std::mutex issm_mutex;
std::map<int, unsigned> issm_files;  // issm fd -> CA
Twin* twin_instance = nullptr;
std::once_flag twin_once;

void destroy_twin() {
  delete twin_instance;
  twin_instance = nullptr;
}

bool is_ib_path(const char* path) {
  return path && (std::strncmp(path, "/sys/class/infiniband", 21) == 0 || std::strncmp(path, kDevDir, std::strlen(kDevDir)) == 0);
}

Twin* twin_for(const char* path) {
  if (!is_ib_path(path)) return twin_instance;
  std::call_once(twin_once, [] {
    twin_instance = new Twin();
    std::atexit(destroy_twin);
  });
  return twin_instance;
}

bool is_tracked(int fd) { return fd >= 0 && fd < kMaxTrackedFd && tracked[fd].load(std::memory_order_acquire); }

int track(int fd) {
  if (fd >= kMaxTrackedFd) {
    raw_close(fd);
    errno = EMFILE;
    return -1;
  }
  tracked[fd].store(true, std::memory_order_release);
  return fd;
}

template <typename T>
int fail(T negative_errno) {
  errno = static_cast<int>(-negative_errno);
  return -1;
}

int open_device(Twin& twin, const char* path, int flags) {
  if (const int ca = twin.ca_of_device(path, "umad"); ca >= 0) {
    const int fd = twin.layer().open_file(static_cast<unsigned>(ca), flags & O_NONBLOCK, flags & O_CLOEXEC);
    return fd < 0 ? fail(fd) : track(fd);
  }
  if (const int ca = twin.ca_of_device(path, "issm"); ca >= 0) {
    if (!twin.layer().ca_present(static_cast<unsigned>(ca))) {
      errno = ENXIO;  // as for its umad file (MadLayer::open_file)
      return -1;
    }
    const int fd = ::eventfd(0, EFD_CLOEXEC);  // never readable: an issm file carries no data
    if (fd < 0) return -1;
    twin.set_issm(static_cast<unsigned>(ca), true);
    std::lock_guard lock(issm_mutex);
    issm_files[fd] = static_cast<unsigned>(ca);
    return track(fd);
  }
  errno = ENOENT;
  return -1;
}

using OpenFn = int (*)(const char*, int, ...);

int open_common(const char* name, const char* path, int flags, mode_t mode) {
  static OpenFn next = next_symbol<OpenFn>(name);
  if (Twin* twin = twin_for(path); twin && is_ib_path(path)) {
    if (std::strncmp(path, kDevDir, std::strlen(kDevDir)) == 0) return open_device(*twin, path, flags);
    twin->refresh_for(path);
    const std::string real = twin->sysfs().redirect(path);
    if (!real.empty()) return next(real.c_str(), flags, mode);
  }
  return next(path, flags, mode);
}

mode_t mode_arg(int flags, va_list args) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? static_cast<mode_t>(va_arg(args, int)) : 0;
}

std::string redirected(const char* path) {
  Twin* twin = twin_for(path);
  if (!twin || !is_ib_path(path)) return path ? path : "";
  twin->refresh_for(path);
  const std::string real = twin->sysfs().redirect(path);
  return real.empty() ? path : real;
}

AgentSpec spec_from(const ib_user_mad_reg_req& req) {
  AgentSpec s;
  s.qpn = req.qpn;
  s.mgmt_class = req.mgmt_class;
  s.class_version = req.mgmt_class_version;
  s.rmpp_version = req.rmpp_version;
  constexpr unsigned bits = 8 * sizeof(unsigned long);
  for (unsigned m = 0; m < 128; ++m) s.methods[m] = (req.method_mask[m / bits] >> (m % bits)) & 1;
  return s;
}

int twin_ioctl(int fd, unsigned long request, void* arg) {
  MadLayer& layer = twin_instance->layer();
  switch (request) {
    case IB_USER_MAD_REGISTER_AGENT: {
      auto* req = static_cast<ib_user_mad_reg_req*>(arg);
      const int id = layer.register_agent(fd, spec_from(*req));
      if (id < 0) return fail(id);
      req->id = static_cast<std::uint32_t>(id);
      return 0;
    }
    case IB_USER_MAD_REGISTER_AGENT2: {
      auto* req = static_cast<ib_user_mad_reg_req2*>(arg);
      if (req->flags & ~IB_USER_MAD_REG_FLAGS_CAP) {
        req->flags = IB_USER_MAD_REG_FLAGS_CAP;
        return fail(-EINVAL);
      }
      AgentSpec s;
      s.qpn = static_cast<std::uint8_t>(req->qpn);
      s.mgmt_class = req->mgmt_class;
      s.class_version = req->mgmt_class_version;
      s.rmpp_version = (req->flags & IB_USER_MAD_USER_RMPP) ? 0 : req->rmpp_version;  // user RMPP: raw segments
      for (unsigned m = 0; m < 128; ++m) s.methods[m] = (req->method_mask[m / 64] >> (m % 64)) & 1;
      const int id = layer.register_agent(fd, s);
      if (id < 0) return fail(id);
      req->id = static_cast<std::uint32_t>(id);
      return 0;
    }
    case IB_USER_MAD_UNREGISTER_AGENT: {
      const int rc = layer.unregister_agent(fd, *static_cast<std::uint32_t*>(arg));
      return rc < 0 ? fail(rc) : 0;
    }
    case IB_USER_MAD_ENABLE_PKEY:
      return 0;
    default:
      return fail(-ENOTTY);
  }
}

}  // namespace
}  // namespace ibat::umad_twin

using namespace ibat::umad_twin;

extern "C" {

int open(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_arg(flags, args);
  va_end(args);
  return open_common("open", path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_arg(flags, args);
  va_end(args);
  return open_common("open64", path, flags, mode);
}

DIR* opendir(const char* path) {
  static auto next = next_symbol<DIR* (*)(const char*)>("opendir");
  const std::string real = redirected(path);
  return next(real.c_str());
}

int scandir(const char* path, struct dirent*** list, int (*filter)(const struct dirent*),
            int (*compare)(const struct dirent**, const struct dirent**)) {
  static auto next = next_symbol<decltype(&scandir)>("scandir");
  const std::string real = redirected(path);
  return next(real.c_str(), list, filter, compare);
}

int scandir64(const char* path, struct dirent64*** list, int (*filter)(const struct dirent64*),
              int (*compare)(const struct dirent64**, const struct dirent64**)) {
  static auto next = next_symbol<decltype(&scandir64)>("scandir64");
  const std::string real = redirected(path);
  return next(real.c_str(), list, filter, compare);
}

int close(int fd) {
  static auto next = next_symbol<int (*)(int)>("close");
  if (!is_tracked(fd)) {
    uevent_sockets().forget(fd);  // a uevent socket: the twin's end goes with it
    return next(fd);
  }
  tracked[fd].store(false, std::memory_order_release);
  {
    std::lock_guard lock(issm_mutex);
    if (auto it = issm_files.find(fd); it != issm_files.end()) {
      const unsigned ca = it->second;
      issm_files.erase(it);
      if (!std::getenv("SIM_SET_ISSM")) twin_instance->set_issm(ca, false);
      return raw_close(fd);
    }
  }
  twin_instance->layer().close_file(fd);
  return 0;
}

ssize_t read(int fd, void* buf, size_t count) {
  static auto next = next_symbol<ssize_t (*)(int, void*, size_t)>("read");
  if (!is_tracked(fd)) return next(fd, buf, count);
  const ssize_t n = twin_instance->layer().read(fd, static_cast<std::uint8_t*>(buf), count);
  return n < 0 ? fail(n) : n;
}

ssize_t write(int fd, const void* buf, size_t count) {
  static auto next = next_symbol<ssize_t (*)(int, const void*, size_t)>("write");
  if (!is_tracked(fd)) return next(fd, buf, count);
  const ssize_t n = twin_instance->layer().write(fd, static_cast<const std::uint8_t*>(buf), count,
                                                 std::chrono::steady_clock::now());
  twin_instance->wake();  // its timer may now be due earlier
  return n < 0 ? fail(n) : n;
}

// A kernel uevent socket is the program's end of a socketpair whose other end the twin writes
// uevents to (uevent.h); recv/recvmsg/read/poll of it are plain libc ones.
int socket(int domain, int type, int protocol) {
  static auto next = next_symbol<int (*)(int, int, int)>("socket");
  if (domain != AF_NETLINK || protocol != NETLINK_KOBJECT_UEVENT) return next(domain, type, protocol);
  return uevent_sockets().open(type);
}

int bind(int fd, const struct sockaddr* address, socklen_t length) {
  static auto next = next_symbol<int (*)(int, const struct sockaddr*, socklen_t)>("bind");
  if (uevent_sockets().owns(fd)) return 0;  // to the kernel's group (1): the twin's uevents are all there is
  return next(fd, address, length);
}

int setsockopt(int fd, int level, int name, const void* value, socklen_t length) {
  static auto next = next_symbol<int (*)(int, int, int, const void*, socklen_t)>("setsockopt");
  if (uevent_sockets().owns(fd)) return 0;  // SO_RCVBUF(FORCE), SO_PASSCRED, ...: nothing to set on a socketpair
  return next(fd, level, name, value, length);
}

// libibverbs' device and async-event calls, for the twin's CAs (verbs_devices.h); with
// IBAT_TWIN_VERBS=0, or for a device or context not the twin's, libibverbs' own.
ibv_device** ibv_get_device_list(int* count) {
  static auto next = next_symbol<ibv_device** (*)(int*)>("ibv_get_device_list");
  Twin* twin = twin_for("/sys/class/infiniband");
  if (twin && twin->verbs()) return twin->verbs()->list(count);
  if (next) return next(count);
  errno = ENOSYS;
  return nullptr;
}

void ibv_free_device_list(ibv_device** list) {
  static auto next = next_symbol<void (*)(ibv_device**)>("ibv_free_device_list");
  if (twin_instance && twin_instance->verbs()) return VerbsDevices::free_list(list);
  if (next) next(list);
}

const char* ibv_get_device_name(ibv_device* device) {
  static auto next = next_symbol<const char* (*)(ibv_device*)>("ibv_get_device_name");
  if (twin_instance && twin_instance->verbs() && twin_instance->verbs()->owns(device)) return device->name;
  return next ? next(device) : nullptr;
}

ibv_context* ibv_open_device(ibv_device* device) {
  static auto next = next_symbol<ibv_context* (*)(ibv_device*)>("ibv_open_device");
  if (twin_instance && twin_instance->verbs() && twin_instance->verbs()->owns(device)) {
    ibv_context* context = twin_instance->verbs()->open(device);
    twin_instance->wake();  // its port is watched from now on
    return context;
  }
  if (next) return next(device);
  errno = ENOSYS;
  return nullptr;
}

int ibv_close_device(ibv_context* context) {
  static auto next = next_symbol<int (*)(ibv_context*)>("ibv_close_device");
  if (twin_instance && twin_instance->verbs() && twin_instance->verbs()->owns(context)) {
    return twin_instance->verbs()->close(context);
  }
  return next ? next(context) : ENOSYS;
}

int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  static auto next = next_symbol<int (*)(ibv_context*, ibv_async_event*)>("ibv_get_async_event");
  if (twin_instance && twin_instance->verbs() && twin_instance->verbs()->owns(context)) {
    return twin_instance->verbs()->get_event(context, event);
  }
  if (next) return next(context, event);
  errno = ENOSYS;
  return -1;
}

void ibv_ack_async_event(ibv_async_event* event) {
  static auto next = next_symbol<void (*)(ibv_async_event*)>("ibv_ack_async_event");
  if (twin_instance && twin_instance->verbs()) return;  // the twin's events hold no object to release
  if (next) next(event);
}

int ioctl(int fd, unsigned long request, ...) {
  static auto next = next_symbol<int (*)(int, unsigned long, ...)>("ioctl");
  va_list args;
  va_start(args, request);
  void* arg = va_arg(args, void*);
  va_end(args);
  if (!is_tracked(fd)) return next(fd, request, arg);
  return twin_ioctl(fd, request, arg);
}

}  // extern "C"
