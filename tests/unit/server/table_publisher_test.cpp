// TablePublisher: the shared table holds exactly the answers the Resolver accepts as valid, until
// their TTL ends; failures, cancelled queries and mismatched answers are not published, and a
// republish keeps only what is still valid.
#include <gtest/gtest.h>

#include "server/daemon/table_publisher.h"
#include "shm/path_table_reader.h"

namespace ibat::server {
namespace {

using namespace std::chrono_literals;

const core::Gid kLocal = core::Gid::from_parts(0xfe80000000000000ull, 1);
core::Gid dest(std::uint64_t n) { return core::Gid::from_parts(0xfe80000000000000ull, 0x100 + n); }

core::PathRecord path_to(std::uint64_t n) {
  core::PathRecord p;
  p.sgid = kLocal;
  p.dgid = dest(n);
  p.dlid = core::Lid{static_cast<std::uint16_t>(10 + n)};
  p.slid = core::Lid{1};
  p.mtu = 4;
  p.rate = 3;
  return p;
}

struct NullSink : core::QuerySink {
  std::vector<core::QueryId> sent, cancelled;
  void send_path_query(const core::PathQuery& q) override { sent.push_back(q.id); }
  void cancel_query(core::QueryId id) override { cancelled.push_back(id); }
};

struct TablePublisherTest : ::testing::Test {
  static constexpr std::uint32_t kSlots = 64;
  std::vector<std::uint64_t> memory = std::vector<std::uint64_t>(shm::table_bytes(kSlots) / 8);
  shm::PathTableWriter writer{memory.data(), kSlots};
  shm::PathTableReader reader = [this] {
    std::string error;
    return *shm::PathTableReader::open(memory.data(), shm::table_bytes(kSlots), error);
  }();
  NullSink fabric;
  TablePublisher publisher{fabric};
  core::TimePoint now{core::Duration{5s}};
  core::Duration ttl = 60s;

  void SetUp() override { publisher.attach(&writer); }
  std::optional<shm::TableHit> find(std::uint64_t n) {
    return reader.lookup(shm::TableKey::of(kLocal, dest(n), core::Pkey{}));
  }
  void query(core::QueryId id, std::uint64_t n) {
    publisher.send_path_query(core::PathQuery{id, kLocal, dest(n), std::nullopt, core::Pkey{}});
  }
};

TEST_F(TablePublisherTest, AcceptedAnswerIsPublishedUntilItsTtlEnds) {
  query(1, 1);
  EXPECT_EQ(fabric.sent, std::vector<core::QueryId>{1});
  publisher.on_query_result(1, core::QueryResult{core::Error::ok, path_to(1)}, now, ttl);
  ASSERT_TRUE(find(1));
  EXPECT_EQ(find(1)->path.decode(), path_to(1));
  EXPECT_EQ(find(1)->produced_ms, 5000u);
  EXPECT_EQ(publisher.next_expiry(), now + ttl);
  publisher.expire(now + ttl - 1ms);
  EXPECT_TRUE(find(1));
  publisher.expire(now + ttl);
  EXPECT_FALSE(find(1));
}

TEST_F(TablePublisherTest, RevalidationExtendsTheTtlAndAFailureUnpublishes) {
  query(1, 1);
  publisher.on_query_result(1, core::QueryResult{core::Error::ok, path_to(1)}, now, ttl);
  query(2, 1);
  publisher.on_query_result(2, core::QueryResult{core::Error::ok, path_to(1)}, now + 30s, ttl);
  publisher.expire(now + ttl);
  EXPECT_TRUE(find(1)) << "the older expiry is outdated";
  query(3, 1);
  publisher.on_query_result(3, core::QueryResult{core::Error::no_record, {}}, now + 40s, ttl);
  EXPECT_FALSE(find(1));
}

TEST_F(TablePublisherTest, CancelledQueriesAndMismatchedAnswersAreNotPublished) {
  query(1, 1);
  publisher.cancel_query(1);
  EXPECT_EQ(fabric.cancelled, std::vector<core::QueryId>{1});
  publisher.on_query_result(1, core::QueryResult{core::Error::ok, path_to(1)}, now, ttl);
  EXPECT_FALSE(find(1)) << "late answer to a flushed query";
  query(2, 2);
  publisher.on_query_result(2, core::QueryResult{core::Error::ok, path_to(3)}, now, ttl);
  EXPECT_FALSE(find(2));
  EXPECT_FALSE(find(3));
  core::PathRecord zero = path_to(4);
  zero.dlid = core::Lid{0};
  query(3, 4);
  publisher.on_query_result(3, core::QueryResult{core::Error::ok, zero}, now, ttl);
  EXPECT_FALSE(find(4));
}

TEST_F(TablePublisherTest, AnswerByLidIsPublishedUnderTheDgidItNames) {
  publisher.send_path_query(core::PathQuery{1, kLocal, std::nullopt, core::Lid{17}, core::Pkey{}});
  publisher.on_query_result(1, core::QueryResult{core::Error::ok, path_to(7)}, now, ttl);
  ASSERT_TRUE(find(7));
  EXPECT_EQ(find(7)->path.decode().dlid.value, 17);
}

TEST_F(TablePublisherTest, RepublishKeepsOnlyWhatIsStillValid) {
  query(1, 1);
  publisher.on_query_result(1, core::QueryResult{core::Error::ok, path_to(1)}, now, ttl);
  std::vector<core::CacheEntryView> entries;
  auto view = [](std::uint64_t n, core::EntryState state, core::Duration age) {
    return core::CacheEntryView{kLocal, dest(n), core::Pkey{}, state, path_to(n), age, 0s, core::Error::ok};
  };
  entries.push_back(view(2, core::EntryState::valid, 10s));
  entries.push_back(view(3, core::EntryState::stale, 1s));
  entries.push_back(view(4, core::EntryState::provisional, 1s));
  entries.push_back(view(5, core::EntryState::valid, 60s));  // at its TTL: stale when served
  publisher.republish(entries, now, ttl);
  EXPECT_FALSE(find(1)) << "not among the entries any more";
  ASSERT_TRUE(find(2));
  EXPECT_EQ(publisher.next_expiry(), now + 50s);
  EXPECT_FALSE(find(3));
  EXPECT_FALSE(find(4));
  EXPECT_FALSE(find(5));
  EXPECT_EQ(publisher.published(), 1u);
}

}  // namespace
}  // namespace ibat::server
