#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.notify: ibatd started as systemd starts a Type=notify unit with WatchdogSec=, against a
# stand-in for systemd's notification socket ($NOTIFY_SOCKET: a datagram socket this test reads)
# with WATCHDOG_USEC=2 s: READY=1 once it serves, STATUS= with its port active and paths cached,
# WATCHDOG=1 pings, RELOADING=1 then READY=1 around SIGHUP, STOPPING=1 on SIGTERM.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
name=$(lab_name e2enotify)
lab_up "$name" --topology "$TOPO/small-2sw4hca.net" >/dev/null

# systemd's side: prints each datagram as one line (its "\n" shown as " | ").
notify_socket=$E2E_DIR/notify.sock
coproc SYSTEMD { exec python3 -u -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound")
while True:
    print(s.recv(4096).decode().replace("\n", " | "))
' "$notify_socket"; }
on_exit 'kill "$SYSTEMD_PID" 2>/dev/null'
IFS= read -r -t 10 line <&"${SYSTEMD[0]}" && [[ $line == bound ]] || fail "the stand-in notification socket did not start"

# notified PATTERN WHAT: reads datagrams until one matches the glob PATTERN (20 s at most); it is
# kept in $NOTIFIED
notified() {
  local deadline=$((SECONDS + 20))
  while ((SECONDS < deadline)); do
    IFS= read -r -t $((deadline - SECONDS)) NOTIFIED <&"${SYSTEMD[0]}" || break
    # shellcheck disable=SC2053
    if [[ $NOTIFIED == $1 ]]; then pass "$2: $NOTIFIED"; return; fi
  done
  fail "$2: no datagram like '$1' within 20 s"
}

export NOTIFY_SOCKET=$notify_socket WATCHDOG_USEC=2000000
start_ibatd "$name" Hca1 d
unset NOTIFY_SOCKET WATCHDOG_USEC
notified "READY=1 | STATUS=? of 1 port active, *" "READY=1 with the status"
active="*STATUS=1 of 1 port active, [1-9]* cached"
# shellcheck disable=SC2053
[[ $NOTIFIED == $active ]] || notified "$active" "STATUS= once the port is active and paths are cached"
notified "WATCHDOG=1" "WATCHDOG=1 ping"
notified "WATCHDOG=1" "WATCHDOG=1 ping again (every 1 s: half of WATCHDOG_USEC)"

kill -HUP "${DAEMON_PID[d]}"
notified "RELOADING=1 | MONOTONIC_USEC=[1-9]*" "RELOADING=1 on SIGHUP"
notified "READY=1 | STATUS=1 of 1 port active, *" "READY=1 when the reload is done"

stop_ibatd d
expect_eq "ibatd exit code after SIGTERM" "$DAEMON_EXIT" 0
notified "STOPPING=1" "STOPPING=1 on SIGTERM"
