// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The file that holds a shared path table: ibatd creates it (mode 0644, written only by ibatd,
// swapped in atomically, the table it replaces invalidated first) small and grows it as the paths
// it holds grow (a larger file renamed over it, the old one marked moved; a smaller one the same
// way when most paths went), and libibat maps it
// read-only after checking it is a regular file owned by the daemon's uid and writable by nobody else.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "shm/path_table_reader.h"
#include "shm/path_table_writer.h"

namespace ibat::shm {

// An mmap()ed region, unmapped on destruction.
class Mapping {
 public:
  Mapping(void* address, std::size_t size) : address_(address), size_(size) {}
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  void* address() const { return address_; }
  std::size_t size() const { return size_; }

 private:
  void* address_;
  std::size_t size_;
};

// The daemon's side: the writer over a freshly created table file.
class TableFile {
 public:
  // Creates `path` holding an empty table of `slot_count` slots, which grow() may double up to
  // `max_slot_count`. A table already at `path` is invalidated first (its readers see nothing from
  // then on). nullptr and `error` on failure.
  static std::unique_ptr<TableFile> create(const std::string& path, std::uint32_t slot_count,
                                           std::uint32_t max_slot_count, std::string& error);
  // Invalidates the table and removes the file.
  ~TableFile();

  // Replaces the table by one of twice the slots holding the same paths: written under a temporary
  // name, renamed over the path, then the old one marked moved (its readers map the path again)
  // and its slots' pages freed.
  // False, the table unchanged, at max_slot_count or when the new file cannot be made (`error`).
  bool grow(std::string& error);
  // The same move to a table of fewer slots, room for twice the paths held, if that saves at
  // least 1 - 1/kShrinkFactor of them (paths went: a flush, an SM change). False, the table
  // unchanged, when it would not (`error` empty) or when the new file cannot be made (`error`).
  bool shrink(std::string& error);

  // The writer of the current table; grow() replaces it.
  PathTableWriter& writer() { return *writer_; }
  const std::string& path() const { return path_; }

 private:
  TableFile(std::string path, std::unique_ptr<Mapping> mapping, std::unique_ptr<PathTableWriter> writer,
            std::uint32_t max_slot_count)
      : path_(std::move(path)), mapping_(std::move(mapping)), writer_(std::move(writer)), max_slots_(max_slot_count) {}
  // Moves the paths to a new table of `slot_count` slots (grow, shrink).
  bool move_to(std::uint32_t slot_count, std::string& error);

  std::string path_;
  std::unique_ptr<Mapping> mapping_;
  std::unique_ptr<PathTableWriter> writer_;
  std::uint32_t max_slots_;
};

// The client's side: a read-only mapping and its reader.
struct MappedTable {
  std::unique_ptr<Mapping> mapping;
  PathTableReader reader;
};
// Maps `path` read-only if it is a regular file owned by `owner`, not writable by group or others,
// and holds a valid table header; nullopt and `error` otherwise.
std::optional<MappedTable> open_table_file(const std::string& path, uid_t owner, std::string& error);

// Where ibatd keeps the table of the native socket `socket` (and where libibat looks for it).
inline std::string table_path_for_socket(const std::string& socket) { return socket + ".table"; }

// The slot count of a table for `capacity` entries (kSlotsPerKey slots per entry).
std::uint32_t slots_for_capacity(std::uint32_t capacity);

}  // namespace ibat::shm
