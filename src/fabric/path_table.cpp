// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PathRecord and NodeRecord tables: decode, check against the question, leave out what no client
// can use; the SwitchInfoRecord table that sizes the subnet.
#include "fabric/path_table.h"

#include <algorithm>
#include <cstdio>

#include "fabric/sa_client.h"
#include "mad/node_record.h"
#include "mad/path_record.h"
#include "mad/sa_table.h"
#include "mad/switch_info_record.h"

namespace ibat::fabric {
namespace {

constexpr std::size_t kNodeRecordStride = 112;  // 108 bytes padded to 8-byte words

// The table an answer holds, or why none: longer than the transport kept, or unreadable.
mad::Result<mad::SaTable> table_in(const MadAnswer& answer, std::size_t record_size, std::size_t max_records) {
  if (answer.length > answer.bytes.size()) {
    return mad::DecodeError{"SA table: the answer of " + std::to_string(answer.length) +
                            " bytes is longer than the " + std::to_string(table_message_bound(max_records)) +
                            " bytes that " + std::to_string(max_records) + " records may take"};
  }
  return mad::decode_sa_table(answer.bytes.first(answer.length), record_size, max_records);
}

}  // namespace

std::size_t table_message_bound(std::size_t max_records) {
  return mad::kSaHeaderSize + max_records * kNodeRecordStride;
}

PathTable failed_table(core::Error error, std::string reason) {
  PathTable out;
  out.error = error;
  out.reason = std::move(reason);
  return out;
}

std::string table_status_text(const mad::MadHeader& header) {
  if (header.status == 0) return {};
  char text[96];
  std::snprintf(text, sizeof text, "MAD status 0x%04x (%s)", header.status,
                core::to_string(error_from_sa_status(header)).data());
  return text;
}

PathTable path_table_from_answer(const core::Gid& sgid, core::Pkey pkey, const MadAnswer& answer,
                                 std::size_t max_records) {
  PathTable out;
  auto refuse = [&out](core::Error error, std::string reason) {
    PathTable failed = failed_table(error, std::move(reason));
    failed.records = out.records;
    return failed;
  };
  if (answer.header.status != 0) {
    return refuse(error_from_sa_status(answer.header), "the SA refused the PathRecord GetTable: " +
                                                           table_status_text(answer.header));
  }
  auto table = table_in(answer, mad::kPathRecordSize, max_records);
  if (!table) return refuse(core::Error::invalid, table.error().message);
  out.records = table->count;
  std::set<core::Gid> listed;
  for (std::size_t i = 0; i < table->count; ++i) {
    auto path = mad::decode_path_record(table->record(i));
    if (!path) return refuse(core::Error::invalid, path.error().message);
    if (path->sgid != sgid || path->pkey.base() != pkey.base()) {
      return refuse(core::Error::invalid, "PathRecord " + std::to_string(i) + " of the table is from " +
                                              path->sgid.to_string() + " P_Key " + path->pkey.to_string() +
                                              ", not the " + sgid.to_string() + " P_Key " + pkey.to_string() +
                                              " asked for");
    }
    if (!listed.insert(path->dgid).second) {
      ++out.extra_paths;
      continue;
    }
    out.paths.push_back(*path);
  }
  return out;
}

SwitchTable switch_table_from_answer(const MadAnswer& answer, std::size_t max_records) {
  SwitchTable out;
  if (answer.header.status != 0) {
    out.error = "the SA refused the NodeRecord GetTable: " + table_status_text(answer.header);
    return out;
  }
  auto table = table_in(answer, mad::kNodeRecordSize, max_records);
  if (!table) {
    out.error = table.error().message;
    return out;
  }
  out.records = table->count;
  for (std::size_t i = 0; i < table->count; ++i) {
    auto node = mad::decode_node_record(table->record(i));
    if (!node || node->node_type != mad::node_type::kSwitch) continue;
    out.ports.lids.insert(node->lid);
    out.ports.guids.insert(node->port_guid);
  }
  return out;
}

SwitchInfoTable subnet_size_from_answer(const MadAnswer& answer, std::size_t max_records) {
  SwitchInfoTable out;
  auto fail = [&out](core::Error error, std::string reason) {
    out.size.error = error;
    out.size.reason = std::move(reason);
    return out;
  };
  if (answer.header.status != 0) {
    return fail(error_from_sa_status(answer.header),
                "the SA refused the SwitchInfoRecord GetTable: " + table_status_text(answer.header));
  }
  auto table = table_in(answer, mad::kSwitchInfoRecordSize, max_records);
  if (!table) return fail(core::Error::invalid, table.error().message);
  out.records = table->count;
  for (std::size_t i = 0; i < table->count; ++i) {
    auto record = mad::decode_switch_info_record(table->record(i));
    if (!record) return fail(core::Error::invalid, record.error().message);
    out.size.lids = std::max<std::size_t>(out.size.lids, record->linear_fdb_top);
  }
  if (out.size.lids == 0) return fail(core::Error::no_record, "no switch lists a LinearFDBTop");
  return out;
}

void leave_out_switches(PathTable& table, const SwitchPorts& switches) {
  const std::size_t before = table.paths.size();
  std::erase_if(table.paths, [&switches](const core::PathRecord& p) {
    return switches.lids.contains(p.dlid) || switches.guids.contains(p.dgid.interface_id());
  });
  table.switch_ports += before - table.paths.size();
  table.switches_known = true;
}

}  // namespace ibat::fabric
