// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Warm-cache snapshot file format and I/O.
//
// Layout (big-endian):
//   header  magic "IBATSNAP" (8) | version u16 | entry size u16 | entry count u32 | written unix ms u64
//   entry   sgid 16 | dgid 16 | pkey u16 | reserved u16 | age ms u64 | idle ms u64 | PathRecord 64 (IBA wire)
//   trailer CRC-32 u32 of everything before it
#include "server/daemon/snapshot.h"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "mad/path_record.h"
#include "wire/byte_order.h"

namespace ibat::server {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

constexpr std::array<std::uint8_t, 8> kMagic = {'I', 'B', 'A', 'T', 'S', 'N', 'A', 'P'};
// Ages are capped at ten years so that a clock jump or a forged file cannot overflow durations.
constexpr std::uint64_t kMaxAgeMs = 10ULL * 365 * 24 * 3600 * 1000;

constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr auto kCrcTable = make_crc_table();

std::uint64_t to_ms(core::Duration d) {
  auto ms = duration_cast<milliseconds>(d).count();
  return ms < 0 ? 0 : std::min<std::uint64_t>(static_cast<std::uint64_t>(ms), kMaxAgeMs);
}

std::int64_t unix_ms(WallTime t) {
  return duration_cast<milliseconds>(t.time_since_epoch()).count();
}

// A path kept apart for a ServiceID or QoS class is asked again after a restart: the snapshot's
// format names (SGID, DGID, P_Key) only, and there are few such paths.
bool worth_keeping(const core::CacheEntryView& e) {
  return e.qos.is_default() && (e.state == core::EntryState::valid || e.state == core::EntryState::stale) &&
         e.path.is_servable();
}

// fsync() the directory holding `path` so that the rename itself is durable.
std::string sync_directory(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::string dir = parent.empty() ? std::string(".") : parent.string();
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fmt::format("open directory {}: {}", dir, std::strerror(errno));
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  return rc == 0 ? std::string() : fmt::format("fsync directory {}: {}", dir, std::strerror(saved));
}

// What a non-regular file is, for the message that refuses it.
std::string_view file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a special file";
}

}  // namespace

std::uint32_t crc32(std::span<const std::uint8_t> bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::uint8_t b : bytes) c = kCrcTable[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::vector<std::uint8_t> encode_snapshot(const std::vector<core::CacheEntryView>& entries,
                                          WallTime written_at) {
  std::size_t count = 0;
  for (const auto& e : entries) count += worth_keeping(e) ? 1 : 0;
  std::vector<std::uint8_t> out(kSnapshotHeaderSize + count * kSnapshotEntrySize + kSnapshotTrailerSize);
  std::span<std::uint8_t> b(out);
  std::copy(kMagic.begin(), kMagic.end(), out.begin());
  wire::put16(b, 8, kSnapshotVersion);
  wire::put16(b, 10, kSnapshotEntrySize);
  wire::put32(b, 12, static_cast<std::uint32_t>(count));
  wire::put64(b, 16, static_cast<std::uint64_t>(unix_ms(written_at)));
  std::size_t off = kSnapshotHeaderSize;
  for (const auto& e : entries) {
    if (!worth_keeping(e)) continue;
    wire::put_gid(b, off, e.sgid);
    wire::put_gid(b, off + 16, e.dgid);
    wire::put16(b, off + 32, e.pkey.value);
    wire::put16(b, off + 34, 0);
    wire::put64(b, off + 36, to_ms(e.age));
    wire::put64(b, off + 44, to_ms(e.idle));
    auto record = mad::encode_path_record(e.path);
    std::copy(record.begin(), record.end(), out.begin() + static_cast<std::ptrdiff_t>(off + 52));
    off += kSnapshotEntrySize;
  }
  wire::put32(b, off, crc32(b.first(off)));
  return out;
}

SnapshotContents decode_snapshot(std::span<const std::uint8_t> bytes, WallTime now,
                                 std::size_t max_entries) {
  auto fail = [](std::string message) { return SnapshotContents{{}, std::move(message)}; };
  if (bytes.size() < kSnapshotHeaderSize + kSnapshotTrailerSize) {
    return fail(fmt::format("truncated: {} bytes, a snapshot has at least {}", bytes.size(),
                            kSnapshotHeaderSize + kSnapshotTrailerSize));
  }
  if (!std::equal(kMagic.begin(), kMagic.end(), bytes.begin())) {
    return fail("not an ibat snapshot (bad magic)");
  }
  std::uint16_t version = wire::get16(bytes, 8);
  if (version != kSnapshotVersion) {
    return fail(fmt::format("version {} is not supported (this ibatd reads version {})", version,
                            kSnapshotVersion));
  }
  std::uint16_t entry_size = wire::get16(bytes, 10);
  if (entry_size != kSnapshotEntrySize) {
    return fail(fmt::format("entry size {} (expected {})", entry_size, kSnapshotEntrySize));
  }
  std::uint64_t count = wire::get32(bytes, 12);
  if (count > max_entries) {
    return fail(fmt::format("{} entries, more than the {} accepted", count, max_entries));
  }
  std::uint64_t expected_size = kSnapshotHeaderSize + count * kSnapshotEntrySize + kSnapshotTrailerSize;
  if (bytes.size() != expected_size) {
    return fail(fmt::format("{}: {} entries need {} bytes, the file has {}",
                            bytes.size() < expected_size ? "truncated" : "trailing bytes", count,
                            expected_size, bytes.size()));
  }
  std::size_t body = bytes.size() - kSnapshotTrailerSize;
  std::uint32_t stored = wire::get32(bytes, body);
  std::uint32_t computed = crc32(bytes.first(body));
  if (stored != computed) {
    return fail(fmt::format("checksum mismatch (stored {:#010x}, computed {:#010x})", stored, computed));
  }
  std::int64_t since_written = unix_ms(now) - static_cast<std::int64_t>(wire::get64(bytes, 16));
  std::uint64_t extra_age = since_written > 0 ? static_cast<std::uint64_t>(since_written) : 0;

  SnapshotContents result;
  result.entries.reserve(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t off = kSnapshotHeaderSize + i * kSnapshotEntrySize;
    auto record = mad::decode_path_record(bytes.subspan(off + 52, mad::kPathRecordSize));
    if (!record) return fail(fmt::format("entry {}: {}", i, record.error().message));
    core::CacheEntryView e;
    e.sgid = wire::get_gid(bytes, off);
    e.dgid = wire::get_gid(bytes, off + 16);
    e.pkey = core::Pkey{wire::get16(bytes, off + 32)};
    e.state = core::EntryState::stale;
    e.path = record.value();
    if (!e.path.is_servable() || e.dgid.is_zero() || !e.pkey.is_valid()) {
      return fail(fmt::format("entry {}: destination {} has no servable path (DLID {}, SLID {})", i,
                              e.dgid.to_string(), e.path.dlid.value, e.path.slid.value));
    }
    std::uint64_t age_ms = std::min(wire::get64(bytes, off + 36), kMaxAgeMs);
    std::uint64_t idle_ms = std::min(wire::get64(bytes, off + 44), kMaxAgeMs);
    e.age = milliseconds(static_cast<std::int64_t>(std::min(age_ms + extra_age, kMaxAgeMs)));
    e.idle = milliseconds(static_cast<std::int64_t>(std::min(idle_ms + extra_age, kMaxAgeMs)));
    result.entries.push_back(e);
  }
  return result;
}

SnapshotContents load_snapshot_file(const std::string& path, WallTime now, std::size_t max_entries) {
  auto fail = [&](std::string message) {
    return SnapshotContents{{}, fmt::format("{}: {}", path, message)};
  };
  // Non-blocking, so a FIFO (or a device) at the path cannot stall start-up before fstat sees it.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return {};
    return fail(std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    std::string message = fmt::format("fstat: {}", std::strerror(errno));
    ::close(fd);
    return fail(std::move(message));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(fmt::format("{}, not a regular file: remove it or set snapshot.cache_file (--cache-file) "
                            "to a file's path (\"\" disables the warm cache)",
                            file_kind(st.st_mode)));
  }
  std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  std::uint64_t limit = kSnapshotHeaderSize + std::uint64_t{max_entries} * kSnapshotEntrySize +
                        kSnapshotTrailerSize;
  if (size > limit) {
    ::close(fd);
    return fail(fmt::format("{} bytes, more than {} entries can take ({} bytes)", size, max_entries, limit));
  }
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  std::size_t have = 0;
  while (have < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + have, bytes.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(have);
  SnapshotContents contents = decode_snapshot(bytes, now, max_entries);
  if (!contents.ok()) contents.error = fmt::format("{}: {}", path, contents.error);
  return contents;
}

std::string prepare_snapshot_directory(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty() || ::mkdir(dir.c_str(), 0750) == 0) return {};
  int error = errno;
  struct stat st {};
  if (error == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return {};
  return fmt::format("cannot create directory {}: {}; create it or set snapshot.cache_file (--cache-file) "
                     "to a path in a writable directory (\"\" disables the warm cache)",
                     dir.string(), std::strerror(error));
}

std::string write_snapshot_file(const std::string& path, std::span<const std::uint8_t> bytes) {
  // mkostemp creates the temporary file exclusively (O_CREAT | O_EXCL) under a random name: a file
  // or symlink planted where it might go is never opened, so never written through.
  std::string temp = path + ".tmp.XXXXXX";
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return fmt::format("create {}: {}", temp, std::strerror(errno));
  auto fail = [&](std::string_view what) {
    std::string message = fmt::format("{} {}: {}", what, temp, std::strerror(errno));
    ::close(fd);
    ::unlink(temp.c_str());
    return message;
  };
  if (::fchmod(fd, 0644) != 0) return fail("fchmod");  // mkostemp makes it 0600
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write");
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("fsync");
  if (::close(fd) != 0) {
    std::string message = fmt::format("close {}: {}", temp, std::strerror(errno));
    ::unlink(temp.c_str());
    return message;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    std::string message = fmt::format("rename {} to {}: {}", temp, path, std::strerror(errno));
    ::unlink(temp.c_str());
    return message;
  }
  return sync_directory(path);
}

}  // namespace ibat::server
