// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Whether a file descriptor is the systemd journal's stream: $JOURNAL_STREAM ("DEV:INODE", in
// decimal; systemd.exec(5)) names the stream systemd connected, and a descriptor is that stream
// only when its own device and inode match (a child that redirected its output inherits the
// variable but not the stream).
#pragma once

namespace ibat::server {

// True when `journal_stream` (the value of $JOURNAL_STREAM; nullptr when unset) is well formed
// and names the device and inode of `fd`.
bool is_journal_stream(int fd, const char* journal_stream);

}  // namespace ibat::server
