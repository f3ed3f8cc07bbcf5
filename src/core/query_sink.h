// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The boundary between core/ and the fabric: core/ asks for PathRecord queries through a
// QuerySink, and the owner feeds results back with Resolver::on_query_result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/types.h"

namespace ibat::core {

using QueryId = std::uint64_t;

// One SA PathRecord GET. Exactly one of dgid / dlid identifies the destination.
struct PathQuery {
  QueryId id = 0;
  Gid sgid;
  std::optional<Gid> dgid;
  std::optional<Lid> dlid;
  Pkey pkey;
  // Sent with their component-mask bits when present: the SM's QoS policy may answer by them.
  std::optional<std::uint64_t> service_id;
  std::optional<std::uint16_t> qos_class;
};

// Outcome of one PathQuery as reported by the fabric (after the fabric's own MAD retries).
struct QueryResult {
  Error error = Error::ok;  // ok, timeout, no_record, invalid, unreachable
  PathRecord path;          // meaningful when error == ok
};

// One SA PathRecord GetTable: a path from `sgid` to every end port of its subnet on `pkey`
// (DGID wildcarded), asked with `qos_class` and its component-mask bit when present (the SM's
// QoS policy may answer by it). The answer holds one path per destination, switches left out.
struct TableQuery {
  QueryId id = 0;
  Gid sgid;
  Pkey pkey;
  std::optional<std::uint16_t> qos_class;
};

struct TableResult {
  Error error = Error::ok;        // not ok: the SA refused, never answered, or sent what cannot be read
  std::vector<PathRecord> paths;  // when ok
  std::string reason;             // when not ok: why, in words for the log
};

// How many LIDs the port's subnet has, from a query that computes no path (fabric: the switches'
// SwitchInfoRecords, whose LinearFDBTop is the highest LID the SM assigned). The Resolver asks it
// before its first GetTable when it knows nothing of its subnet, so that even that table takes its
// place in the subnet's spread (resolver_tables.cpp).
struct SubnetSizeQuery {
  QueryId id = 0;
};

struct SubnetSizeResult {
  Error error = Error::ok;  // not ok: refused, never answered (timeout), or unreadable
  std::size_t lids = 0;     // when ok: the highest LID in use, a bound on the end ports (0: none known)
  std::string reason;       // when not ok: why, in words for the log
};

class QuerySink {
 public:
  virtual ~QuerySink() = default;
  // Send the query. The owner must later call Resolver::on_query_result(query.id, ...) exactly once,
  // unless the Resolver calls cancel_query(id) first.
  virtual void send_path_query(const PathQuery& query) = 0;
  // The Resolver no longer wants the answer (e.g. flush). A late result for it is ignored anyway.
  virtual void cancel_query(QueryId /*id*/) {}
  // Send the GetTable; the owner must later call Resolver::on_table_result(query.id, ...) exactly
  // once (a late one after the Resolver dropped it is ignored). False: this sink sends no tables
  // (none here, or the SA refused them until the next SM): the Resolver uses GETs.
  virtual bool send_table_query(const TableQuery& /*query*/) { return false; }
  // Send the size query; the owner must later call Resolver::on_subnet_size(query.id, ...) exactly
  // once. False: this sink cannot ask it (no tables, no SA known yet): the table goes unspread.
  virtual bool send_size_query(const SubnetSizeQuery& /*query*/) { return false; }
  // Send the table gate's probe (core/table_gate.h), a GET of the port's path to itself whose round
  // trip shows the SA's queue; the owner must later call Resolver::on_query_result(query.id, ...)
  // exactly once, never from within this call, unless the Resolver cancels it. False: this sink
  // cannot probe (no SA known yet, or a test's fake): the table goes as if the queue were empty.
  virtual bool send_probe(const PathQuery& /*query*/) { return false; }
};

}  // namespace ibat::core
