// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortEventSource over libibverbs: the async-event fd of the verbs device named like the umad CA,
// read non-blocking on the owner's loop; events of other ports and other kinds are acknowledged
// and dropped.
#include <fcntl.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <asio/posix/stream_descriptor.hpp>

#include "fabric/port_events.h"

namespace ibat::fabric {
namespace {

std::optional<PortEvent> port_event(ibv_event_type type) {
  switch (type) {
    case IBV_EVENT_SM_CHANGE: return PortEvent::sm_change;
    case IBV_EVENT_CLIENT_REREGISTER: return PortEvent::client_reregister;
    case IBV_EVENT_LID_CHANGE: return PortEvent::lid_change;
    case IBV_EVENT_PORT_ACTIVE: return PortEvent::port_active;
    case IBV_EVENT_PORT_ERR: return PortEvent::port_error;
    case IBV_EVENT_GID_CHANGE: return PortEvent::gid_change;
    case IBV_EVENT_PKEY_CHANGE: return PortEvent::pkey_change;
    default: return std::nullopt;
  }
}

class VerbsEventSource final : public PortEventSource {
 public:
  VerbsEventSource(asio::io_context& loop, ibv_context* context, int port)
      : context_(context), port_(port), fd_(loop, context->async_fd) {}
  ~VerbsEventSource() override {
    stop();
    fd_.release();  // the fd belongs to the verbs context
    ibv_close_device(context_);
  }

  void start(Handler on_event) override {
    handler_ = std::move(on_event);
    wait();
  }
  void stop() override {
    std::error_code ignored;
    fd_.cancel(ignored);
  }

 private:
  void wait() {
    fd_.async_wait(asio::posix::stream_descriptor::wait_read, [this](const std::error_code& ec) {
      if (ec) return;
      drain();
      wait();
    });
  }
  void drain() {
    ibv_async_event event{};
    while (ibv_get_async_event(context_, &event) == 0) {
      const std::optional<PortEvent> kind = port_event(event.event_type);
      const int port = event.element.port_num;
      ibv_ack_async_event(&event);
      if (kind && port == port_ && handler_) handler_(*kind);
    }
  }

  ibv_context* context_;
  int port_;
  asio::posix::stream_descriptor fd_;
  Handler handler_;
};

}  // namespace

std::unique_ptr<PortEventSource> open_verbs_events(asio::io_context& loop, const std::string& ca, int port,
                                                   std::string& why) {
  int count = 0;
  ibv_device** devices = ibv_get_device_list(&count);
  if (!devices) {
    why = std::string("no verbs device list: ") + std::strerror(errno);
    return nullptr;
  }
  ibv_context* context = nullptr;
  bool found = false;
  for (int i = 0; i < count; ++i) {
    if (ca != ibv_get_device_name(devices[i])) continue;
    found = true;
    context = ibv_open_device(devices[i]);
    if (!context) why = "verbs device " + ca + " cannot be opened: " + std::strerror(errno);
  }
  ibv_free_device_list(devices);
  if (!found) why = "no verbs device named " + ca;
  if (!context) return nullptr;
  const int flags = fcntl(context->async_fd, F_GETFL);
  if (flags < 0 || fcntl(context->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    why = std::string("verbs async fd: ") + std::strerror(errno);
    ibv_close_device(context);
    return nullptr;
  }
  return std::make_unique<VerbsEventSource>(loop, context, port);
}

}  // namespace ibat::fabric
