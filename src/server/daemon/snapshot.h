// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Warm-cache snapshot: the SA-derived path entries written to disk so a restarted ibatd can serve
// them at once (as stale, revalidated in the background). The file is versioned and CRC32-checked,
// written atomically (exclusively created temp file, fsync, rename, fsync of the directory), and
// read with every size checked before anything is allocated. A bad file is reported and ignored,
// never half-loaded.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/resolve_types.h"

namespace ibat::server {

inline constexpr std::uint16_t kSnapshotVersion = 1;
inline constexpr std::size_t kSnapshotHeaderSize = 24;
inline constexpr std::size_t kSnapshotEntrySize = 116;
inline constexpr std::size_t kSnapshotTrailerSize = 4;

using WallTime = std::chrono::system_clock::time_point;

// Entries in a state worth keeping (valid or stale, with a servable path), encoded as a file image.
std::vector<std::uint8_t> encode_snapshot(const std::vector<core::CacheEntryView>& entries,
                                          WallTime written_at);

struct SnapshotContents {
  std::vector<core::CacheEntryView> entries;  // state stale; age includes the time since writing
  std::string error;                          // non-empty: the file is unusable, entries is empty
  bool ok() const { return error.empty(); }
};

// Checks magic, version, entry size, count against the byte size and `max_entries`, the CRC and
// every path record. Errors say what is wrong (not the file name; the caller adds it).
SnapshotContents decode_snapshot(std::span<const std::uint8_t> bytes, WallTime now,
                                 std::size_t max_entries);

// Reads and decodes `path`. A file that does not exist is not an error (empty result, ok).
// Errors start with the path.
SnapshotContents load_snapshot_file(const std::string& path, WallTime now, std::size_t max_entries);

// Creates the directory holding `path` when it is missing (that last component only, mode 0750).
// Returns an empty string when it exists afterwards, else one line: what failed and what to set.
std::string prepare_snapshot_directory(const std::string& path);

// Writes `bytes` to `path` atomically. Returns an empty string on success, else what failed.
std::string write_snapshot_file(const std::string& path, std::span<const std::uint8_t> bytes);

// CRC-32 (IEEE 802.3, as zlib's crc32).
std::uint32_t crc32(std::span<const std::uint8_t> bytes);

}  // namespace ibat::server
