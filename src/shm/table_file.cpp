// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TableFile and open_table_file (see table_file.h).
#include "shm/table_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ibat::shm {

namespace {

std::string system_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Bumps the generation of the table at `path`, if there is one we own, so that clients still
// mapping it (the daemon that wrote it is gone) stop answering from it.
void invalidate_existing(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      static_cast<std::size_t>(st.st_size) >= sizeof(TableHeader)) {
    void* address = ::mmap(nullptr, sizeof(TableHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (address != MAP_FAILED) {
      auto* header = static_cast<TableHeader*>(address);
      if (header->magic == kMagic) header->generation.fetch_add(1, std::memory_order_acq_rel);
      ::munmap(address, sizeof(TableHeader));
    }
  }
  ::close(fd);
}

// A new, zeroed (sparse: no page is used until written) table file at `temporary`, mapped.
std::unique_ptr<Mapping> create_mapped(const std::string& temporary, std::uint32_t slot_count, std::string& error) {
  ::unlink(temporary.c_str());
  int fd = ::open(temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    error = system_error("cannot create shared path table", temporary);
    return nullptr;
  }
  const std::size_t size = table_bytes(slot_count);
  void* address = MAP_FAILED;
  if (::fchmod(fd, 0644) != 0 || ::ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      (address = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
    error = system_error("cannot size or map shared path table", temporary);
    ::close(fd);
    ::unlink(temporary.c_str());
    return nullptr;
  }
  ::close(fd);
  return std::make_unique<Mapping>(address, size);
}

bool move_into_place(const std::string& temporary, const std::string& path, std::string& error) {
  if (::rename(temporary.c_str(), path.c_str()) == 0) return true;
  error = system_error("cannot move shared path table into place at", path);
  ::unlink(temporary.c_str());
  return false;
}

std::string temporary_for(const std::string& path) { return path + ".new"; }

}  // namespace

Mapping::~Mapping() { ::munmap(address_, size_); }

std::uint32_t slots_for_capacity(std::uint32_t capacity) {
  std::uint32_t slots = kMinSlots;
  while (slots < kMaxSlots && slots / kSlotsPerKey < capacity) slots *= 2;
  return slots;
}

std::unique_ptr<TableFile> TableFile::create(const std::string& path, std::uint32_t slot_count,
                                             std::uint32_t max_slot_count, std::string& error) {
  invalidate_existing(path);
  const std::string temporary = temporary_for(path);
  std::unique_ptr<Mapping> mapping = create_mapped(temporary, slot_count, error);
  if (!mapping) return nullptr;
  auto writer = std::make_unique<PathTableWriter>(mapping->address(), slot_count);
  std::unique_ptr<TableFile> file(new TableFile(path, std::move(mapping), std::move(writer), max_slot_count));
  if (!move_into_place(temporary, path, error)) return nullptr;
  return file;
}

bool TableFile::grow(std::string& error) {
  const std::uint32_t slots = writer_->slot_count();
  if (slots >= max_slots_ || slots >= kMaxSlots) {
    error = "shared path table " + path_ + " is at its largest, " + std::to_string(slots) + " slots";
    return false;
  }
  return move_to(slots * 2, error);
}

bool TableFile::shrink(std::string& error) {
  const std::uint32_t slots = slots_for_capacity(static_cast<std::uint32_t>(2 * writer_->size()));
  if (slots * kShrinkFactor > writer_->slot_count()) return false;
  return move_to(slots, error);
}

bool TableFile::move_to(std::uint32_t slot_count, std::string& error) {
  const std::string temporary = temporary_for(path_);
  std::unique_ptr<Mapping> mapping = create_mapped(temporary, slot_count, error);
  if (!mapping) return false;
  auto moved = std::make_unique<PathTableWriter>(mapping->address(), slot_count, writer_->generation() + 1);
  writer_->copy_into(*moved);
  if (!move_into_place(temporary, path_, error)) return false;
  writer_->mark_moved();
  // Processes that still map the old file (until their next resolve) keep it: its slots are
  // empty now, so give their pages back (all but the header's; a failure only keeps them).
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (mapping_->size() > page)
    ::madvise(static_cast<std::byte*>(mapping_->address()) + page, mapping_->size() - page, MADV_REMOVE);
  writer_ = std::move(moved);
  mapping_ = std::move(mapping);
  return true;
}

TableFile::~TableFile() {
  writer_->clear();
  ::unlink(path_.c_str());
}

std::optional<MappedTable> open_table_file(const std::string& path, uid_t owner, std::string& error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    error = system_error("cannot open shared path table", path);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = system_error("cannot stat shared path table", path);
    ::close(fd);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != owner || (st.st_mode & 022) != 0) {
    error = "shared path table " + path + " is not a regular file owned by uid " + std::to_string(owner) +
            " and writable by it alone: not used";
    ::close(fd);
    return std::nullopt;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* address = size ? ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (address == MAP_FAILED) {
    error = size ? system_error("cannot map shared path table", path) : "shared path table " + path + " is empty";
    return std::nullopt;
  }
  auto mapping = std::make_unique<Mapping>(address, size);
  auto reader = PathTableReader::open(address, size, error);
  if (!reader) {
    error = "shared path table " + path + ": " + error;
    return std::nullopt;
  }
  return MappedTable{std::move(mapping), *reader};
}

}  // namespace ibat::shm
