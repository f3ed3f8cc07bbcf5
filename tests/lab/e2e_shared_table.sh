#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.shared_table: libibat answers from ibatd's shared path table exactly what the socket answers
# (e2e_table_client), the answers really came from the table (`ibat stats` table_hits grows by the
# client's hits while cache_hits does not), and the table is gone after SIGTERM.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
CLIENT=${E2E_TABLE_CLIENT:?set by ctest: path of e2e_table_client}
name=$(lab_name e2etab)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
src=h0003
start_ibatd "$name" $src d
dgids=()
for dest in h0000 h0009 h0017 h0030; do dgids+=("$(host "$name" $dest gid)"); done
# The daemon has started (the table exists) once it resolves; --force-sa asks the daemon, not the
# table (the default prefetch may have published the path already), so table_hits stays the client's.
deadline=$((SECONDS + 30))
until cli d resolve --dgid "${dgids[0]}" --force-sa --timeout 2000 >/dev/null 2>&1; do
  ((SECONDS < deadline)) || fail "ibatd does not resolve ${dgids[0]} within 30 s: $(tail -5 "$DAEMON_DIR/d.err")"
  sleep 0.2
done
[[ -f "$(sock d).table" ]] || fail "no shared table next to $(sock d)"
pass "ibatd created $(sock d).table"
expect_eq "table file mode" "$(stat -c %a "$(sock d).table")" 644
hits=$("$CLIENT" "$(sock d)" "${dgids[@]}") || fail "e2e_table_client failed (exit $?)"
pass "table answers identical to socket answers ($hits table resolves)"

# The report is sent at ibat_close; the daemon counts it when it reads it.
table_hits=0
for _ in $(seq 50); do
  table_hits=$(jq_py "$(cli d stats --json)" 'j["table_hits"]')
  [[ $table_hits == "$hits" ]] && break
  sleep 0.1
done
expect_eq "ibat stats table_hits" "$table_hits" "$hits"

stop_ibatd d
expect_eq "ibatd exit code after SIGTERM" "$DAEMON_EXIT" 0
[[ ! -e "$(sock d).table" ]] || fail "shared table left behind after SIGTERM"
pass "shared table removed at shutdown"
