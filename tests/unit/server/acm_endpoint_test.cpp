// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibatd's ACM endpoint answers PERF_QUERY and EP_QUERY for endpoints and ports it does not have the
// way rdma-core's ibacm does (docs/acm.md): ESRCADDR for an unknown endpoint of a PERF_QUERY,
// EINVAL for an EP_QUERY of a port other than 0 (any) or 1.
#include <unistd.h>

#include "security_harness.h"
#include "server/acm/acm_messages.h"

namespace ibat::server::security_test {
namespace {

class AcmEndpoint : public DaemonTest {
 protected:
  void SetUp() override {
    DaemonTest::SetUp();
    config_.server.acm_socket = (dir_ / "acm.sock").string();
    start();
  }

  // Sends `request` and returns the status of its answer (the whole answer is read).
  std::optional<std::uint8_t> status_of(const std::vector<std::uint8_t>& request) {
    Client c(config_.server.acm_socket);
    if (!c.send(request)) return std::nullopt;
    std::vector<std::uint8_t> header = c.read_bytes(16);
    if (header.size() != 16) return std::nullopt;
    const std::size_t length = (std::size_t{header[6]} << 8) | header[7];  // network order
    if (length > 16 && c.read_bytes(length - 16).size() != length - 16) return std::nullopt;
    return header[2];
  }
};

// A PERF_QUERY or EP_QUERY header: length in network order, data[0] and data[1] as given.
std::vector<std::uint8_t> query(acm::Opcode opcode, std::uint8_t data0, std::uint8_t data1, std::size_t length = 16) {
  std::vector<std::uint8_t> m(length, 0);
  m[0] = 1;  // version
  m[1] = static_cast<std::uint8_t>(opcode);
  m[3] = data0;
  m[4] = data1;
  m[6] = static_cast<std::uint8_t>(length >> 8);
  m[7] = static_cast<std::uint8_t>(length);
  return m;
}

// PERF_QUERY for the endpoint owning the name `source` (`ib_acme -P s -s NAME`).
std::vector<std::uint8_t> perf_query_by_name(const std::string& source) {
  std::vector<std::uint8_t> m = query(acm::Opcode::perf_query, 0, 0, 16 + acm::kEpLength);
  const std::uint32_t flags = acm::kEpFlagSource;  // host order, as libacm writes it
  const auto type = static_cast<std::uint16_t>(acm::EpType::name);
  std::memcpy(&m[16], &flags, sizeof(flags));
  std::memcpy(&m[20], &type, sizeof(type));
  std::memcpy(&m[24], source.data(), std::min<std::size_t>(source.size(), 63));
  return m;
}

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

constexpr auto kSuccess = static_cast<std::uint8_t>(acm::Status::success);
constexpr auto kEinval = static_cast<std::uint8_t>(acm::Status::einval);
constexpr auto kEsrcaddr = static_cast<std::uint8_t>(acm::Status::esrcaddr);

TEST_F(AcmEndpoint, PerfQueryOfEndpointTwoOrMoreIsEsrcaddr) {
  EXPECT_EQ(status_of(query(acm::Opcode::perf_query, 0, 0)), kSuccess);  // the whole service
  EXPECT_EQ(status_of(query(acm::Opcode::perf_query, 0, 1)), kSuccess);  // endpoint 1
  EXPECT_EQ(status_of(query(acm::Opcode::perf_query, 0, 2)), kEsrcaddr);
  EXPECT_EQ(status_of(query(acm::Opcode::perf_query, 0, 255)), kEsrcaddr);
}

TEST_F(AcmEndpoint, PerfQueryOfASourceNoEndpointOwnsIsEsrcaddr) {
  EXPECT_EQ(status_of(perf_query_by_name(this_host())), kSuccess);  // the name EP_QUERY lists
  EXPECT_EQ(status_of(perf_query_by_name("not-" + this_host())), kEsrcaddr);
}

TEST_F(AcmEndpoint, EpQueryOfEndpointOneOnPortsAboveOneIsEinval) {
  EXPECT_EQ(status_of(query(acm::Opcode::ep_query, 1, 0)), kSuccess);  // any port
  EXPECT_EQ(status_of(query(acm::Opcode::ep_query, 1, 1)), kSuccess);
  EXPECT_EQ(status_of(query(acm::Opcode::ep_query, 1, 2)), kEinval);
  EXPECT_EQ(status_of(query(acm::Opcode::ep_query, 1, 255)), kEinval);
  EXPECT_EQ(status_of(query(acm::Opcode::ep_query, 2, 1)), kEinval);
}

}  // namespace
}  // namespace ibat::server::security_test
