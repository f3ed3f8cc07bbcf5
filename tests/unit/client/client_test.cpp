// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libibat against an in-test fake ibatd: synchronous and asynchronous resolves, out-of-order and
// pipelined replies, cancellation, listings, and the exactly-once completion guarantee when the
// daemon goes away or the handle is closed.
#include <gtest/gtest.h>
#include <poll.h>

#include <cerrno>
#include <map>

#include "fake_server.h"
#include "ibat.h"
#include "ibat.hpp"
#include "protocol/messages.h"

namespace ibat::test {
namespace {

using namespace std::chrono_literals;
namespace protocol = ibat::protocol;

core::PathRecord path_to_lid(std::uint16_t lid) {
  core::PathRecord p;
  p.dgid = core::Gid::from_parts(0xfe80000000000000ull, 0x0002c903000a0000ull | lid);
  p.sgid = core::Gid::from_parts(0xfe80000000000000ull, 0x0002c903000a0001ull);
  p.dlid = core::Lid{lid};
  p.slid = core::Lid{1};
  p.pkey = core::Pkey{0xFFFF};
  p.sl = 3;
  p.mtu = 4;
  p.rate = 16;
  p.pkt_life = 18;
  return p;
}

std::uint16_t requested_lid(const ReceivedFrame& f) {
  auto req = protocol::decode_resolve_request(f.payload);
  EXPECT_TRUE(req) << req.error();
  return req ? std::get<core::Lid>(req.value().target).value : 0;
}

std::vector<std::uint8_t> path_reply(std::uint32_t id, std::uint16_t lid) {
  std::vector<std::uint8_t> out;
  protocol::append_resolve_reply(out, id, core::ResolveResult{core::Error::ok, path_to_lid(lid),
                                                              core::EntryState::stale, 250ms});
  return out;
}

// Answers every RESOLVE by LID with a path to that LID, at once.
void answer_resolves(FakeServer& server, const ReceivedFrame& f) {
  if (f.header.op == static_cast<std::uint8_t>(protocol::Op::resolve))
    server.reply(path_reply(f.header.id, requested_lid(f)));
}

ibat_target lid_target(std::uint16_t lid) {
  ibat_target t{};
  t.type = IBAT_TARGET_LID;
  t.u.lid = lid;
  return t;
}

struct Completion {
  int status = -1;
  std::uint16_t dlid = 0;
  int calls = 0;
};
using Completions = std::map<std::uint32_t, Completion>;

void record(void* user, std::uint32_t id, int status, const ibat_path* path) {
  auto& c = (*static_cast<Completions*>(user))[id];
  c.status = status;
  c.dlid = path ? path->dlid : 0;
  ++c.calls;
}

// Polls the handle until `done` holds (at most 10 s).
void pump(ibat_t* h, const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{ibat_fd(h), POLLIN, 0};
    ASSERT_GE(::poll(&pfd, 1, 1000), 0);
    ibat_process(h);
  }
}

struct Handle {
  ibat_t* h = nullptr;
  explicit Handle(const std::string& path) { EXPECT_EQ(ibat_open(path.c_str(), &h), IBAT_OK); }
  ~Handle() { ibat_close(h); }
};

TEST(Client, SyncResolveReturnsThePathAndTheRequestCarriesTheOptions) {
  FakeServer server(answer_resolves);
  Handle c(server.path());
  ibat_resolve_opts opts{};
  opts.flags = IBAT_RESOLVE_PKEY | IBAT_RESOLVE_FORCE_SA;
  opts.pkey = 0x8001;
  opts.timeout_ms = 700;
  ibat_target t = lid_target(0x21);
  ibat_path p{};
  ASSERT_EQ(ibat_resolve_sync(c.h, &t, &opts, &p), IBAT_OK);
  EXPECT_EQ(p.dlid, 0x21);
  EXPECT_EQ(p.slid, 1);
  EXPECT_EQ(p.sl, 3);
  EXPECT_EQ(ibat_mtu_bytes(p.mtu), 2048u);
  EXPECT_EQ(ibat_rate_gbps(p.rate), 100.0);
  EXPECT_EQ(p.state, static_cast<std::uint32_t>(IBAT_STATE_STALE));
  EXPECT_EQ(p.age_ms, 250u);
  EXPECT_EQ(p.record[40], 0x00);
  EXPECT_EQ(p.record[41], 0x21);
  auto req = protocol::decode_resolve_request(server.wait_for_requests(1).at(0).payload);
  ASSERT_TRUE(req);
  EXPECT_EQ(req.value().pkey, core::Pkey{0x8001});
  EXPECT_TRUE(req.value().force_sa);
  EXPECT_EQ(req.value().timeout, core::Duration(700ms));
  EXPECT_EQ(ibat_pending(c.h), 0u);
}

TEST(Client, SyncResolveReportsTheDaemonsError) {
  FakeServer server([](FakeServer& s, const ReceivedFrame& f) {
    std::vector<std::uint8_t> out;
    protocol::append_resolve_reply(out, f.header.id, core::ResolveResult{core::Error::no_record, {}, {}, {}});
    s.reply(out);
  });
  Handle c(server.path());
  ibat_target t = lid_target(5);
  ibat_path p{};
  EXPECT_EQ(ibat_resolve_sync(c.h, &t, nullptr, &p), IBAT_ENORECORD);
}

TEST(Client, AsyncRepliesOutOfOrderReachTheRightCallbacks) {
  FakeServer server;
  Completions done;  // outlives the handle: ibat_close may still complete requests
  Handle c(server.path());
  std::map<std::uint16_t, std::uint32_t> id_of_lid;
  for (std::uint16_t lid : {std::uint16_t{10}, std::uint16_t{11}, std::uint16_t{12}}) {
    ibat_target t = lid_target(lid);
    std::uint32_t id = 0;
    ASSERT_EQ(ibat_resolve_async(c.h, &t, nullptr, record, &done, &id), IBAT_OK);
    id_of_lid[lid] = id;
  }
  EXPECT_EQ(ibat_pending(c.h), 3u);
  auto requests = server.wait_for_requests(3);
  ASSERT_EQ(requests.size(), 3u);
  for (auto it = requests.rbegin(); it != requests.rend(); ++it)
    server.reply(path_reply(it->header.id, requested_lid(*it)));
  pump(c.h, [&] { return done.size() == 3; });
  ASSERT_EQ(done.size(), 3u);
  for (auto [lid, id] : id_of_lid) {
    EXPECT_EQ(done[id].status, IBAT_OK);
    EXPECT_EQ(done[id].dlid, lid);
    EXPECT_EQ(done[id].calls, 1);
  }
  EXPECT_EQ(ibat_pending(c.h), 0u);
}

TEST(Client, ManyPipelinedRequestsEachCompleteOnce) {
  FakeServer server(answer_resolves);
  Completions done;  // outlives the handle: ibat_close may still complete requests
  Handle c(server.path());
  constexpr std::uint16_t kCount = 1000;
  std::map<std::uint32_t, std::uint16_t> lid_of_id;
  for (std::uint16_t i = 0; i < kCount; ++i) {
    ibat_target t = lid_target(static_cast<std::uint16_t>(i + 1));
    std::uint32_t id = 0;
    ASSERT_EQ(ibat_resolve_async(c.h, &t, nullptr, record, &done, &id), IBAT_OK);
    lid_of_id[id] = static_cast<std::uint16_t>(i + 1);
  }
  pump(c.h, [&] { return done.size() == kCount; });
  ASSERT_EQ(done.size(), kCount);
  for (auto& [id, c1] : done) {
    EXPECT_EQ(c1.calls, 1);
    EXPECT_EQ(c1.status, IBAT_OK);
    EXPECT_EQ(c1.dlid, lid_of_id[id]);
  }
}

TEST(Client, PendingCapAnswersOverloadedWithoutCallingBack) {
  FakeServer server;
  Completions done;  // outlives the handle: ibat_close may still complete requests
  Handle c(server.path());
  ibat_target t = lid_target(1);
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(ibat_resolve_async(c.h, &t, nullptr, record, &done, nullptr), IBAT_OK);
  EXPECT_EQ(ibat_resolve_async(c.h, &t, nullptr, record, &done, nullptr), IBAT_EOVERLOADED);
  EXPECT_EQ(ibat_pending(c.h), 1024u);
}

TEST(Client, DaemonClosingMidRequestFailsEveryPendingCallbackExactlyOnce) {
  FakeServer server;
  Completions done;  // outlives the handle: ibat_close may still complete requests
  Handle c(server.path());
  for (std::uint16_t lid = 1; lid <= 5; ++lid) {
    ibat_target t = lid_target(lid);
    ASSERT_EQ(ibat_resolve_async(c.h, &t, nullptr, record, &done, nullptr), IBAT_OK);
  }
  auto requests = server.wait_for_requests(5);
  ASSERT_EQ(requests.size(), 5u);
  server.reply(path_reply(requests[2].header.id, 3));  // one answered before the close
  server.close_connection();
  pump(c.h, [&] { return done.size() == 5; });
  ASSERT_EQ(done.size(), 5u);
  int ok = 0, lost = 0;
  for (auto& [id, c1] : done) {
    EXPECT_EQ(c1.calls, 1);
    ok += c1.status == IBAT_OK;
    lost += c1.status == IBAT_EDISCONNECTED;
  }
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(lost, 4);
  EXPECT_EQ(ibat_process(c.h), IBAT_EDISCONNECTED);
  ibat_target t = lid_target(9);
  EXPECT_EQ(ibat_resolve_async(c.h, &t, nullptr, record, &done, nullptr), IBAT_EDISCONNECTED);
  ibat_path p{};
  EXPECT_EQ(ibat_resolve_sync(c.h, &t, nullptr, &p), IBAT_EDISCONNECTED);
  EXPECT_EQ(done.size(), 5u);
  EXPECT_NE(std::string(ibat_last_message(c.h)).find("closed"), std::string::npos);
}

TEST(Client, SyncResolveFailsWhenTheDaemonCloses) {
  FakeServer server([](FakeServer& s, const ReceivedFrame&) { s.close_connection(); });
  Handle c(server.path());
  ibat_target t = lid_target(1);
  ibat_path p{};
  EXPECT_EQ(ibat_resolve_sync(c.h, &t, nullptr, &p), IBAT_EDISCONNECTED);
}

TEST(Client, CloseCancelsPendingRequestsExactlyOnce) {
  FakeServer server;
  Completions done;
  {
    Handle c(server.path());
    for (std::uint16_t lid = 1; lid <= 3; ++lid) {
      ibat_target t = lid_target(lid);
      ASSERT_EQ(ibat_resolve_async(c.h, &t, nullptr, record, &done, nullptr), IBAT_OK);
    }
  }
  ASSERT_EQ(done.size(), 3u);
  for (auto& [id, c1] : done) {
    EXPECT_EQ(c1.calls, 1);
    EXPECT_EQ(c1.status, IBAT_ECANCELLED);
  }
}

TEST(Client, CancelSendsCancelAndTheCallbackGetsCancelled) {
  FakeServer server([](FakeServer& s, const ReceivedFrame& f) {
    if (f.header.op != static_cast<std::uint8_t>(protocol::Op::cancel)) return;
    auto cancel = protocol::decode_cancel(f.payload);
    std::vector<std::uint8_t> out;
    protocol::append_resolve_reply(out, cancel.value().target_id,
                                   core::ResolveResult{core::Error::cancelled, {}, {}, {}});
    protocol::append_empty_reply(out, f.header.id, protocol::Op::cancel, protocol::Status::ok);
    s.reply(out);
  });
  Completions done;  // outlives the handle: ibat_close may still complete requests
  Handle c(server.path());
  ibat_target t = lid_target(4);
  std::uint32_t id = 0;
  ASSERT_EQ(ibat_resolve_async(c.h, &t, nullptr, record, &done, &id), IBAT_OK);
  ASSERT_EQ(ibat_cancel(c.h, id), IBAT_OK);
  pump(c.h, [&] { return done.size() == 1; });
  EXPECT_EQ(done[id].status, IBAT_ECANCELLED);
  EXPECT_EQ(ibat_cancel(c.h, id), IBAT_EARG);
  auto requests = server.wait_for_requests(2);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(protocol::decode_cancel(requests[1].payload).value().target_id, id);
}

TEST(Client, ConnectFailureIsEconnectWithErrno) {
  ibat_t* h = reinterpret_cast<ibat_t*>(&errno);
  errno = 0;
  EXPECT_EQ(ibat_open("/nonexistent/ibatd.sock", &h), IBAT_ECONNECT);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(h, nullptr);
}

// ibat_flush_count: the daemon's count, UINT32_MAX from a daemon that sends an empty payload,
// and a reply of the wrong size is a protocol error.
TEST(Client, FlushCountReportsWhatTheDaemonDropped) {
  int replies = 0;
  FakeServer server([&](FakeServer& s, const ReceivedFrame& f) {
    std::vector<std::uint8_t> out;
    auto op = static_cast<protocol::Op>(f.header.op);
    if (replies++ == 0) {
      protocol::append_flush_reply(out, f.header.id, 3);
    } else if (replies == 2) {
      protocol::append_empty_reply(out, f.header.id, op, protocol::Status::ok);
    } else {
      protocol::append_frame(out, protocol::FrameHeader{protocol::kVersion, protocol::reply_op(op), protocol::Status::ok,
                                                        0, f.header.id, 2},
                             std::vector<std::uint8_t>{0, 1});
    }
    s.reply(out);
  });
  Handle c(server.path());
  std::uint32_t dropped = 0;
  EXPECT_EQ(ibat_flush_count(c.h, nullptr, 0, &dropped), IBAT_OK);
  EXPECT_EQ(dropped, 3u);
  EXPECT_EQ(ibat_flush_count(c.h, nullptr, 0, &dropped), IBAT_OK);
  EXPECT_EQ(dropped, UINT32_MAX);
  EXPECT_EQ(ibat_flush_count(c.h, nullptr, 0, &dropped), IBAT_EPROTO);
}

TEST(Client, QueryJsonReassemblesChunksAndPagesAndAdminOpsReportStatus) {
  std::string big = "\"" + std::string(100000, 'x') + "\"";  // a page of several frames
  FakeServer server([&](FakeServer& s, const ReceivedFrame& f) {
    std::vector<std::uint8_t> out;
    auto op = static_cast<protocol::Op>(f.header.op);
    if (op == protocol::Op::paths) {
      auto req = protocol::decode_paths_request(f.payload);
      ASSERT_TRUE(req);
      // Three pages: cursor 0 -> 10 -> 20 -> end; the middle one empty.
      std::uint32_t cursor = req.value().cursor;
      protocol::PathsPage page = cursor == 0    ? protocol::PathsPage{10, "[1,2]"}
                                 : cursor == 10 ? protocol::PathsPage{20, "[]"}
                                                : protocol::PathsPage{0, "[" + big + "]"};
      protocol::append_paths_reply(out, f.header.id, page);
    } else if (op == protocol::Op::flush) protocol::append_empty_reply(out, f.header.id, op, protocol::Status::denied);
    else protocol::append_empty_reply(out, f.header.id, op, protocol::Status::ok);
    s.reply(out);
  });
  Handle c(server.path());
  char* json = nullptr;
  ASSERT_EQ(ibat_query_json(c.h, IBAT_LIST_PATHS, &json), IBAT_OK);
  EXPECT_EQ(std::string(json), "[1,2," + big + "]");
  ibat_free(json);
  EXPECT_EQ(ibat_flush(c.h, nullptr, 0), IBAT_EDENIED);
  ibat_target ip{};
  ASSERT_EQ(ibat_parse_ip("10.0.0.7", &ip), IBAT_OK);
  std::uint8_t hw[20] = {0x80};
  EXPECT_EQ(ibat_neigh_add(c.h, &ip, hw, 7), IBAT_OK);
  auto requests = server.wait_for_requests(5);
  ASSERT_EQ(requests.size(), 5u);
  auto add = protocol::decode_neigh_add(requests[4].payload);
  ASSERT_TRUE(add);
  EXPECT_EQ(add.value().ip.to_string(), "10.0.0.7");
  EXPECT_EQ(add.value().slid, core::Lid{7});
  EXPECT_EQ(ibat_query_json(c.h, 99, &json), IBAT_EARG);
}

TEST(Client, ErrorFrameFailsTheRequestAndKeepsTheMessage) {
  FakeServer server([](FakeServer& s, const ReceivedFrame& f) {
    std::vector<std::uint8_t> out;
    protocol::append_error(out, f.header.id, protocol::Status::malformed, "RESOLVE payload is 3 bytes");
    s.reply(out);
    s.close_connection();
  });
  Handle c(server.path());
  ibat_target t = lid_target(2);
  ibat_path p{};
  EXPECT_EQ(ibat_resolve_sync(c.h, &t, nullptr, &p), IBAT_EMALFORMED);
  EXPECT_STREQ(ibat_last_message(c.h), "RESOLVE payload is 3 bytes");
}

TEST(Client, WatchDeliversEventsUntilTheCallbackStops) {
  FakeServer server([](FakeServer& s, const ReceivedFrame& f) {
    if (f.header.op != static_cast<std::uint8_t>(protocol::Op::watch)) return;
    std::vector<std::uint8_t> out;
    for (const char* ev : {R"({"event":"sm_change"})", R"({"event":"flush"})", R"({"event":"path"})"}) {
      std::string_view text(ev);
      std::size_t at = protocol::begin_frame(out, protocol::reply_op(protocol::Op::watch), protocol::Status::ok,
                                             protocol::kFlagMore, f.header.id);
      out.insert(out.end(), text.begin(), text.end());
      protocol::finish_frame(out, at);
    }
    s.reply(out);
  });
  ibat::Client client(server.path().c_str());
  std::vector<std::string> events;
  client.watch([&](const char* json) {
    events.emplace_back(json);
    return events.size() < 2;
  });
  EXPECT_EQ(events, (std::vector<std::string>{R"({"event":"sm_change"})", R"({"event":"flush"})"}));
  auto requests = server.wait_for_requests(2);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].header.op, static_cast<std::uint8_t>(protocol::Op::cancel));
}

TEST(Client, CppWrapperFutureAndErrors) {
  FakeServer server(answer_resolves);
  ibat::Client client(server.path().c_str());
  auto future = client.resolve_future(lid_target(0x33));
  while (future.wait_for(0s) != std::future_status::ready) client.wait_and_process(1000);
  EXPECT_EQ(future.get().dlid, 0x33);
  EXPECT_EQ(client.resolve(ibat::Client::target("0x34")).dlid, 0x34);
  EXPECT_THROW(ibat::Client::target("not-an-address"), ibat::Error);
  try {
    ibat::Client nowhere("/nonexistent/ibatd.sock");
    FAIL();
  } catch (const ibat::Error& e) {
    EXPECT_EQ(e.status(), IBAT_ECONNECT);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ibatd.sock"), std::string::npos);
  }
}

TEST(Client, CppWrapperExplainsWhereThePathCameFromAndThrowsTheDaemonsError) {
  FakeServer server([](FakeServer& s, const ReceivedFrame& f) {
    std::vector<std::uint8_t> out;
    if (requested_lid(f) != 0x41) {
      protocol::append_resolve_reply(out, f.header.id, core::ResolveResult{core::Error::no_record, {}, {}, {}});
    } else {
      core::ResolveResult result{core::Error::ok, path_to_lid(0x41), core::EntryState::valid, 1500ms};
      result.origin = core::PathOrigin::warm_cache;
      result.path.service_id = 0x1060cbc;
      result.key_qos_fields = core::QosKey::kServiceId;
      protocol::append_resolve_reply(out, f.header.id, result);
    }
    s.reply(out);
  });
  ibat::Client client(server.path().c_str());
  ibat::Client::Explained e = client.resolve_explain(lid_target(0x41));
  EXPECT_EQ(e.path.dlid, 0x41);
  EXPECT_EQ(e.path.age_ms, 1500u);
  EXPECT_EQ(e.explain.origin, static_cast<std::uint32_t>(IBAT_ORIGIN_WARM_CACHE));
  EXPECT_EQ(e.explain.key_fields, static_cast<std::uint32_t>(IBAT_KEY_SERVICE_ID));
  EXPECT_EQ(e.explain.key_service_id, 0x1060cbcu);
  try {
    client.resolve_explain(lid_target(0x42));
    FAIL() << "no record was not thrown";
  } catch (const ibat::Error& err) {
    EXPECT_EQ(err.status(), IBAT_ENORECORD);
  }
}

TEST(Client, TextHelpers) {
  ibat_target t{};
  ASSERT_EQ(ibat_parse_target("fe80::2:c903:a:1", &t), IBAT_OK);
  EXPECT_EQ(t.type, static_cast<std::uint32_t>(IBAT_TARGET_GID));
  ASSERT_EQ(ibat_parse_target("10.1.2.3", &t), IBAT_OK);
  EXPECT_EQ(t.type, static_cast<std::uint32_t>(IBAT_TARGET_IPV4));
  EXPECT_EQ(t.u.ipv4[3], 3);
  ASSERT_EQ(ibat_parse_target("12", &t), IBAT_OK);
  EXPECT_EQ(t.type, static_cast<std::uint32_t>(IBAT_TARGET_LID));
  EXPECT_EQ(t.u.lid, 12);
  const char* hw = "80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:00:01";
  ASSERT_EQ(ibat_parse_target(hw, &t), IBAT_OK);
  EXPECT_EQ(t.type, static_cast<std::uint32_t>(IBAT_TARGET_HW));
  char buf[64];
  ASSERT_EQ(ibat_format_target(&t, buf, sizeof buf), IBAT_OK);
  EXPECT_STREQ(buf, hw);
  EXPECT_EQ(ibat_format_target(&t, buf, 10), IBAT_EARG);
  EXPECT_EQ(ibat_parse_lid("0", &t), IBAT_EARG);
  EXPECT_EQ(ibat_parse_lid("0xC000", &t), IBAT_EARG);
  EXPECT_EQ(ibat_parse_gid("fe80::zz", &t.u.gid), IBAT_EARG);
  ASSERT_EQ(ibat_parse_ip("fd00::1", &t), IBAT_OK);
  EXPECT_EQ(t.type, static_cast<std::uint32_t>(IBAT_TARGET_IPV6));
  EXPECT_STREQ(ibat_strerror(IBAT_ENORECORD), "the subnet administrator has no path to the destination");
  EXPECT_STREQ(ibat_strerror(12345), "unknown ibat status");
}

TEST(Client, DefaultSocketHonoursEnvironment) {
  ::unsetenv("IBAT_SOCKET");
  EXPECT_STREQ(ibat_default_socket(), "/run/ibat/ibatd.sock");
  ::setenv("IBAT_SOCKET", "/tmp/other.sock", 1);
  EXPECT_STREQ(ibat_default_socket(), "/tmp/other.sock");
  ::unsetenv("IBAT_SOCKET");
}

}  // namespace
}  // namespace ibat::test
