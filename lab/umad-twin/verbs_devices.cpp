// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// VerbsDevices: the twin's async-event-only verbs devices (verbs_devices.h).
#include "verbs_devices.h"

#include <sys/eventfd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "raw_io.h"

namespace ibat::umad_twin {
namespace {

constexpr std::size_t kGidPrefix = 8;   // PortInfo:GidPrefix, 8 bytes
constexpr std::size_t kLid = 16;        // PortInfo:LID, 2 bytes
constexpr std::size_t kSmLid = 18;      // PortInfo:MasterSMLID, 2 bytes
constexpr std::size_t kPortState = 32;  // low nibble: PortState
constexpr std::size_t kSmSl = 36;       // low nibble: MasterSMSL
constexpr std::uint8_t kActive = 4;

bool differ(const std::array<std::uint8_t, 64>& a, const std::array<std::uint8_t, 64>& b, std::size_t at,
            std::size_t n) {
  return std::memcmp(a.data() + at, b.data() + at, n) != 0;
}

}  // namespace

std::vector<ibv_event_type> port_changes(const std::array<std::uint8_t, 64>& port_before,
                                         const std::array<std::uint8_t, 64>& port_after,
                                         const std::array<std::uint8_t, 64>& pkeys_before,
                                         const std::array<std::uint8_t, 64>& pkeys_after) {
  std::vector<ibv_event_type> events;
  const bool was_active = (port_before[kPortState] & 0x0F) == kActive;
  const bool is_active = (port_after[kPortState] & 0x0F) == kActive;
  if (was_active && !is_active) events.push_back(IBV_EVENT_PORT_ERR);
  if (differ(port_before, port_after, kLid, 2)) events.push_back(IBV_EVENT_LID_CHANGE);
  if (differ(port_before, port_after, kSmLid, 2) || (port_before[kSmSl] & 0x0F) != (port_after[kSmSl] & 0x0F)) {
    events.push_back(IBV_EVENT_SM_CHANGE);
  }
  if (differ(port_before, port_after, kGidPrefix, 8)) events.push_back(IBV_EVENT_GID_CHANGE);
  if (pkeys_before != pkeys_after) events.push_back(IBV_EVENT_PKEY_CHANGE);
  if (!was_active && is_active) events.push_back(IBV_EVENT_PORT_ACTIVE);
  return events;
}

struct VerbsDevices::Context {
  ibv_context verbs{};
  unsigned ca = 0;
  std::deque<ibv_async_event> events;
};

VerbsDevices::VerbsDevices(const std::vector<std::string>& ca_names) {
  for (const std::string& name : ca_names) {
    auto device = std::make_unique<ibv_device>();
    device->node_type = IBV_NODE_CA;
    device->transport_type = IBV_TRANSPORT_IB;
    std::snprintf(device->name, sizeof device->name, "%s", name.c_str());
    std::snprintf(device->dev_name, sizeof device->dev_name, "uverbs%zu", devices_.size());
    devices_.push_back(std::move(device));
  }
}

VerbsDevices::~VerbsDevices() {
  for (auto& [verbs, context] : contexts_) raw_close(context->verbs.async_fd);
}

ibv_device** VerbsDevices::list(int* count) const {
  auto** list = new ibv_device*[devices_.size() + 1];
  for (std::size_t k = 0; k < devices_.size(); ++k) list[k] = devices_[k].get();
  list[devices_.size()] = nullptr;
  if (count) *count = static_cast<int>(devices_.size());
  return list;
}

void VerbsDevices::free_list(ibv_device** list) { delete[] list; }

bool VerbsDevices::owns(const ibv_device* device) const {
  for (const auto& d : devices_) {
    if (d.get() == device) return true;
  }
  return false;
}

bool VerbsDevices::owns(const ibv_context* context) const {
  std::lock_guard lock(mutex_);
  return contexts_.count(context) > 0;
}

ibv_context* VerbsDevices::open(ibv_device* device) {
  unsigned ca = 0;
  while (ca < devices_.size() && devices_[ca].get() != device) ++ca;
  if (ca == devices_.size()) {
    errno = ENODEV;
    return nullptr;
  }
  const int fd = ::eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
  if (fd < 0) return nullptr;
  auto context = std::make_unique<Context>();
  context->verbs.device = device;
  context->verbs.cmd_fd = -1;
  context->verbs.async_fd = fd;
  context->ca = ca;
  ibv_context* verbs = &context->verbs;
  std::lock_guard lock(mutex_);
  contexts_[verbs] = std::move(context);
  return verbs;
}

int VerbsDevices::close(ibv_context* context) {
  std::lock_guard lock(mutex_);
  const auto it = contexts_.find(context);
  if (it == contexts_.end()) return EINVAL;
  raw_close(it->second->verbs.async_fd);
  contexts_.erase(it);
  return 0;
}

int VerbsDevices::get_event(ibv_context* context, ibv_async_event* event) {
  std::uint64_t one = 0;
  if (raw_read(context->async_fd, &one, sizeof one) != static_cast<ssize_t>(sizeof one)) return -1;
  std::lock_guard lock(mutex_);
  const auto it = contexts_.find(context);
  if (it == contexts_.end() || it->second->events.empty()) {
    errno = EAGAIN;
    return -1;
  }
  *event = it->second->events.front();
  it->second->events.pop_front();
  return 0;
}

void VerbsDevices::raise(unsigned ca, ibv_event_type type, int port) {
  std::lock_guard lock(mutex_);
  for (auto& [verbs, context] : contexts_) {
    if (context->ca != ca) continue;
    ibv_async_event event{};
    event.event_type = type;
    event.element.port_num = port;
    context->events.push_back(event);
    ++raised_;
    const std::uint64_t one = 1;
    (void)!raw_write(context->verbs.async_fd, &one, sizeof one);
  }
}

bool VerbsDevices::watched(unsigned ca) const {
  std::lock_guard lock(mutex_);
  for (const auto& [verbs, context] : contexts_) {
    if (context->ca == ca) return true;
  }
  return false;
}

std::uint64_t VerbsDevices::raised() const {
  std::lock_guard lock(mutex_);
  return raised_;
}

}  // namespace ibat::umad_twin
