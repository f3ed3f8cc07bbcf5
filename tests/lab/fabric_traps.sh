#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# fabric.traps: with OpenSM sending Reports (--traps), `link down` of a host gives a trap 65
# (GID out of service) event for its GID and `link up` a trap 64 (GID in service) event.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/fabric_lib.sh"
name=$(lab_name ftrap)
lab_up "$name" --topology "$TOPO/fattree-32.net" --traps >/dev/null
victim_gid=$(gid_of "$name" h0020)
events=$FABRIC_ENV_CACHE/events
start_monitor "$name" h0010 "$events" 1000
wait_event "$events" 'e["event"] == "trap_subscribed" and e["trap"] == 64 and e["ok"]' 10 >/dev/null
wait_event "$events" 'e["event"] == "trap_subscribed" and e["trap"] == 65 and e["ok"]' 10 >/dev/null
pass "subscribed to traps 64 and 65"

started=$(now_ms)
"$LAB" link --name "$name" down h0020 >/dev/null
wait_event "$events" "e['event'] == 'gid_out_of_service' and e['gid'] == '$victim_gid'" 20 "$started" >/dev/null
pass "link down h0020 -> trap 65 for $victim_gid"

started=$(now_ms)
"$LAB" link --name "$name" up h0020 >/dev/null
wait_event "$events" "e['event'] == 'gid_in_service' and e['gid'] == '$victim_gid'" 30 "$started" >/dev/null
pass "link up h0020 -> trap 64 for $victim_gid"
