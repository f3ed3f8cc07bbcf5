#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# fabric.sm_failover: with a standby OpenSM, `sm failover` is reported by PortMonitor (1 s polls)
# within two polls of the standby becoming MASTER: an SM change and the new SM LID in local_port.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/fabric_lib.sh"
name=$(lab_name fsmf)
poll_ms=1000
lab_up "$name" --topology "$TOPO/fattree-32.net" --sm-node h0000 --standby-sm h0031 >/dev/null
standby_lid=$(host_field "$name" h0031 lid)
events=$FABRIC_ENV_CACHE/events
start_monitor "$name" h0010 "$events" $poll_ms

started=$(now_ms)
"$LAB" sm --name "$name" failover >/dev/null
done_ms=$(now_ms)
e=$(wait_event "$events" 'e["event"] == "sm_changed"' 10 "$started")
late=$(( $(json_field "$e" wall_ms) - done_ms ))
((late <= 2 * poll_ms)) || fail "fail-over detected ${late} ms after the standby became MASTER"
pass "fail-over detected ${late} ms after the standby became MASTER"
e=$(wait_event "$events" "e['event'] == 'local_port' and e['sm_lid'] == $standby_lid" 10 "$started")
pass "local port now names the standby's LID $standby_lid as SM LID"
# Trap subscriptions are renewed at the new SM.
wait_event "$events" 'e["event"] == "trap_subscribed" and e["ok"]' 10 "$started" >/dev/null
pass "trap subscriptions renewed at the new SM"
