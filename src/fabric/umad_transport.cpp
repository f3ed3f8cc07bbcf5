// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// UmadTransport: libibumad port, agents, the receive thread and the send path.
#include "fabric/umad_transport.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <stdexcept>

#include <asio/post.hpp>
#include <infiniband/umad.h>

#include "mad/constants.h"
#include "mad/smp.h"
#include "wire/byte_order.h"

namespace ibat::fabric {
namespace {

constexpr int kRecvPollMs = 100;  // how long the I/O thread blocks before checking for stop
constexpr int kMadBytes = static_cast<int>(mad::kMadSize);
// umad2sim (the lab's simulated HCA) hands out fds >= 1024 and keeps only the first 224 bytes of
// each MAD, yet reports and copies 256: bytes past 224 come from beyond its own buffer.
constexpr int kSimulatorFdBase = 1024;
constexpr std::size_t kSimulatorMadBytes = 224;

std::string port_name(const std::string& ca, int port) {
  return (ca.empty() ? std::string("<first CA>") : ca) + " port " +
         (port == 0 ? std::string("<first active>") : std::to_string(port));
}

// The bytes of a big-endian (__be16/32/64) field as libibumad stores it, for wire::get*.
template <typename T>
std::span<const std::uint8_t> bytes_of(const T& field) {
  return {reinterpret_cast<const std::uint8_t*>(&field), sizeof field};
}

}  // namespace

#ifdef __SANITIZE_ADDRESS__
// Sanitized builds: umad2sim's read() copies each MAD out of a buffer 32 bytes shorter than the
// length it reports (docs/fabric.md). That over-read is inside the simulator, not ibat's to fix.
extern "C" const char* __asan_default_suppressions() { return "interceptor_via_lib:libumad2sim.so\n"; }
#endif

UmadTransport::UmadTransport(asio::io_context& loop, const std::string& ca, int port, std::size_t max_message_bytes)
    : loop_(loop), max_message_bytes_(std::max(max_message_bytes, mad::kMadSize)) {
  if (umad_init() < 0) throw std::runtime_error("umad_init failed: is libibumad usable here?");
  umad_port_t info{};
  if (umad_get_port(ca.empty() ? nullptr : ca.c_str(), port, &info) < 0) {
    throw std::runtime_error("cannot find InfiniBand " + port_name(ca, port) +
                             " (umad_get_port failed; check `ibstat`)");
  }
  snapshot_.ca = info.ca_name;
  snapshot_.port = info.portnum;
  snapshot_.gid =
      core::Gid::from_parts(wire::get64(bytes_of(info.gid_prefix), 0), wire::get64(bytes_of(info.port_guid), 0));
  snapshot_.lid = core::Lid{static_cast<std::uint16_t>(info.base_lid)};
  snapshot_.sm_lid = core::Lid{static_cast<std::uint16_t>(info.sm_lid)};
  snapshot_.sm_sl = static_cast<std::uint8_t>(info.sm_sl);
  snapshot_.active = info.state == 4;  // IB_PORT_ACTIVE
  umad_release_port(&info);

  port_id_ = umad_open_port(snapshot_.ca.c_str(), snapshot_.port);
  if (port_id_ < 0) {
    throw std::runtime_error("cannot open umad device of " + port_name(snapshot_.ca, snapshot_.port) + ": " +
                             std::strerror(-port_id_) + " (need read/write access to /dev/infiniband/umad*)");
  }
  constexpr unsigned kReport = mad::method::kReport;
  long report_mask[16 / sizeof(long)] = {};
  report_mask[kReport / (8 * sizeof(long))] |= 1L << (kReport % (8 * sizeof(long)));
  simulator_ = umad_get_fd(port_id_) >= kSimulatorFdBase;
  const std::uint8_t sa_rmpp_version = simulator_ ? 0 : 1;  // the kernel reassembles GetTable answers
  sa_agent_ = umad_register(port_id_, mad::mgmt_class::kSubnAdm, mad::kSaClassVersion, sa_rmpp_version, report_mask);
  smi_lid_agent_ = umad_register(port_id_, mad::mgmt_class::kSubnLidRouted, mad::kSmpClassVersion, 0, nullptr);
  smi_dr_agent_ = umad_register(port_id_, mad::mgmt_class::kSubnDirectedRoute, mad::kSmpClassVersion, 0, nullptr);
  if (sa_agent_ < 0 || smi_lid_agent_ < 0 || smi_dr_agent_ < 0) {
    umad_close_port(port_id_);
    throw std::runtime_error("cannot register SA/SMI MAD agents on " + port_name(snapshot_.ca, snapshot_.port));
  }
}

UmadTransport::~UmadTransport() {
  stop();
  receiver_.reset();
  umad_close_port(port_id_);
}

void UmadTransport::start(Receiver receiver) {
  if (io_thread_.joinable()) return;
  receiver_ = std::make_shared<Receiver>(std::move(receiver));
  stopping_ = false;
  io_thread_ = std::thread([this] { io_thread_main(); });
}

void UmadTransport::stop() {
  stopping_ = true;
  if (io_thread_.joinable()) io_thread_.join();
}

bool UmadTransport::send(const OutgoingMad& mad) {
  std::vector<std::uint8_t> buffer(umad_size() + mad::kMadSize, 0);
  void* umad = buffer.data();
  int agent = sa_agent_;
  switch (mad.route) {
    case MadRoute::sa:
      umad_set_addr(umad, mad.dlid.value, static_cast<int>(mad.remote_qpn), mad.sl, static_cast<int>(mad::kQp1Qkey));
      break;
    case MadRoute::smi_lid:
      agent = smi_lid_agent_;
      umad_set_addr(umad, mad.dlid.value, 0, 0, 0);
      break;
    case MadRoute::smi_directed:
      agent = smi_dr_agent_;
      umad_set_addr(umad, mad::kPermissiveLid, 0, 0, 0);
      break;
  }
  umad_set_pkey(umad, 0);
  const std::size_t length = std::min(mad.bytes.size(), mad::kMadSize);
  std::memcpy(umad_get_mad(umad), mad.bytes.data(), length);
  std::lock_guard lock(send_mutex_);
  // The kernel matches a response only to a send that waits for one (timeout > 0); retries are
  // ours, never the kernel's (umad2sim ignores both anyway).
  return umad_send(port_id_, agent, umad, kMadBytes, static_cast<int>(mad.timeout_ms), 0) == 0;
}

void UmadTransport::io_thread_main() {
  std::weak_ptr<Receiver> receiver = receiver_;
  // Room for a whole MAD at least, as libibumad needs: with less, umad2sim truncates and complains
  // on stderr for every MAD. It grows, up to the bound, when the kernel has a longer (RMPP) message.
  std::vector<std::uint8_t> buffer(umad_size() + mad::kMadSize);
  while (!stopping_) {
    int length = static_cast<int>(buffer.size() - umad_size());
    const int agent = umad_recv(port_id_, buffer.data(), &length, kRecvPollMs);
    if (agent == -ENOSPC && static_cast<std::size_t>(length) <= max_message_bytes_) {
      buffer.resize(umad_size() + static_cast<std::size_t>(length));  // the kernel kept it: read it again
    } else if (agent == -ENOSPC) {
      read_oversized(receiver, length);
    } else if (agent >= 0) {
      std::size_t received = std::min(static_cast<std::size_t>(std::max(length, 0)), buffer.size() - umad_size());
      if (simulator_) received = std::min(received, kSimulatorMadBytes);
      post(receiver, buffer, received, received);
    } else if (agent == -EIO || agent == -ENODEV) {
      // The device went away (the kernel killed the file's agents): nothing more will come, and
      // the file stays readable. The kernel's uevent tells ibatd to drop the port; until then
      // sends fail and time out as to a silent SA.
      return;
    }  // else -ETIMEDOUT: idle
  }
}

void UmadTransport::read_oversized(const std::weak_ptr<Receiver>& receiver, int length) {
  std::vector<std::uint8_t> whole(umad_size() + static_cast<std::size_t>(length));
  int whole_length = length;
  if (umad_recv(port_id_, whole.data(), &whole_length, 0) < 0) return;
  ++oversized_;
  post(receiver, whole, mad::kMadSize, static_cast<std::size_t>(whole_length));
}

void UmadTransport::post(const std::weak_ptr<Receiver>& receiver, std::vector<std::uint8_t>& umad, std::size_t kept,
                         std::size_t length) {
  ReceivedMad mad;
  const auto* bytes = static_cast<const std::uint8_t*>(umad_get_mad(umad.data()));
  mad.length = length;
  mad.bytes.assign(bytes, bytes + kept);
  mad.bytes.resize(std::max(kept, mad::kMadSize), 0);
  const ib_mad_addr_t* addr = umad_get_mad_addr(umad.data());
  mad.slid = core::Lid{wire::get16(bytes_of(addr->lid), 0)};
  mad.source_qpn = wire::get32(bytes_of(addr->qpn), 0);
  mad.status = umad_status(umad.data());
  asio::post(loop_, [receiver, mad = std::move(mad)] {
    if (auto r = receiver.lock()) (*r)(mad);
  });
}

}  // namespace ibat::fabric
