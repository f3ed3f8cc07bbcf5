// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// What one PathRecord GetTable brings back, and the pure steps that make it (SaClient sends the
// queries): the SA's records checked against the question (SGID, P_Key) and cut to what a client
// can use — one record per DGID (the first: OpenSM lists a pair's other LMC paths after it) and
// no path to a switch's port 0 (no client talks to a switch; the switches come from a NodeRecord
// GetTable of NodeType 2, since a PathRecord does not say what its destination is); and, before a
// first table, the subnet's size from the switches' SwitchInfoRecords.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/query_sink.h"
#include "core/types.h"
#include "fabric/mad_requester.h"

namespace ibat::fabric {

struct PathTable {
  core::Error error = core::Error::ok;  // ok; timeout: the SA never answered; else refused or unreadable
  std::string reason;                   // when not ok: why, in words for the log
  std::vector<core::PathRecord> paths;  // the usable records, in the SA's order
  std::size_t records = 0;              // records the SA sent
  std::size_t switch_ports = 0;         // left out: to a switch's port 0
  std::size_t extra_paths = 0;          // left out: another record for a DGID already listed
  bool switches_known = false;          // false: the switches' NodeRecords did not come, none left out
};

// The longest GetTable answer to keep whole (UmadTransport's receive bound): the SA header and
// `max_records` NodeRecords (112 bytes), the longest record ibat asks a table of.
std::size_t table_message_bound(std::size_t max_records);

// A table that failed: `error` and why.
PathTable failed_table(core::Error error, std::string reason);

// The switches' port 0, as the NodeRecord table lists them.
struct SwitchPorts {
  std::set<core::Lid> lids;
  std::set<std::uint64_t> guids;
};

// The SA's error for a table answer's MAD status, in words ("" for status 0).
std::string table_status_text(const mad::MadHeader& header);

// A PathRecord GetTableResp for (sgid, pkey), decoded and checked, one record per DGID. Refused
// (status), too long to have been kept whole, unreadable (see mad::decode_sa_table) and records for
// another source or P_Key are errors, with the reason.
PathTable path_table_from_answer(const core::Gid& sgid, core::Pkey pkey, const MadAnswer& answer,
                                 std::size_t max_records);

// The switches in a NodeRecord GetTableResp; an error text when it is refused or unreadable.
struct SwitchTable {
  std::string error;
  SwitchPorts ports;
  std::size_t records = 0;
};
SwitchTable switch_table_from_answer(const MadAnswer& answer, std::size_t max_records);

// The subnet's size in a SwitchInfoRecord GetTableResp: the highest LinearFDBTop of its switches,
// the top of the LIDs the SM assigned (end ports, switches and LMC paths: a bound on the end
// ports). `records`: the records read.
struct SwitchInfoTable {
  core::SubnetSizeResult size;
  std::size_t records = 0;
};
SwitchInfoTable subnet_size_from_answer(const MadAnswer& answer, std::size_t max_records);

// Leaves the paths to the switches' port 0 out of `table` (by DLID or by DGID's GUID).
void leave_out_switches(PathTable& table, const SwitchPorts& switches);

}  // namespace ibat::fabric
