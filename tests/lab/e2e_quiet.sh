#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# e2e.quiet: a host without HCA events (IBAT_TWIN_VERBS=0: the umad twin offers no verbs device,
# as on a host whose verbs device cannot be opened): an idle ibatd with the default monitoring
# sends at most 2 remote MADs (to the SM or SA) in 120 s while it keeps polling its own port (local
# MADs); fabric.mads_sent is the sum of the two. Then a same-LID OpenSM restart, which nothing
# local shows without events (docs/fabric.md), is still noticed from the SA side by the routine
# check. The counters are the evidence, so the 120 s window has to be waited out. With events:
# e2e.hca_events.
source "$(dirname "$0")/lab_lib.sh"
source "$(dirname "$0")/e2e_lib.sh"
export IBAT_TWIN_VERBS=0
name=$(lab_name e2equiet)
lab_up "$name" --topology "$TOPO/fattree-32.net" >/dev/null
node=h0005
start_ibatd "$name" $node q
wait_resolving q "$(host "$name" h0020 gid)"
# Settled: the start-up MADs (first SMInfo, subscriptions, broadcast group, the resolve) are done.
settled=$(cli q stats --json)
until [[ $(jq_py "$settled" 'j["fabric"]["remote_mads_sent"]') == $(jq_py "$(cli q stats --json)" 'j["fabric"]["remote_mads_sent"]') ]]; do
  sleep 1; settled=$(cli q stats --json)
done
sleep 120
now=$(cli q stats --json)
remote=$(( $(jq_py "$now" 'j["fabric"]["remote_mads_sent"]') - $(jq_py "$settled" 'j["fabric"]["remote_mads_sent"]') ))
local_=$(( $(jq_py "$now" 'j["fabric"]["local_mads_sent"]') - $(jq_py "$settled" 'j["fabric"]["local_mads_sent"]') ))
uptime=$(( $(jq_py "$now" 'j["uptime_s"]') - $(jq_py "$settled" 'j["uptime_s"]') ))
((uptime >= 120)) || fail "the window was ${uptime} s by the daemon's uptime, not 120"
((remote <= 2)) || fail "idle ibatd sent $remote remote MADs in $uptime s (goal <= 2)"
pass "idle ibatd sent $remote remote MADs in $uptime s"
((local_ >= uptime)) || fail "only $local_ local PortInfo polls in $uptime s at a 500 ms poll interval"
pass "and $local_ local PortInfo polls"
expect_eq "mads_sent = local + remote" "$(jq_py "$now" 'j["fabric"]["mads_sent"]')" \
  "$(jq_py "$now" 'j["fabric"]["local_mads_sent"] + j["fabric"]["remote_mads_sent"]')"
expect_eq "port events (no verbs device)" "$(jq_py "$now" 'j["fabric"]["port_events"]')" "False"

# A same-LID OpenSM restart while idle: the routine check (60-90 s) finds the SA forgot us.
before=$(jq_py "$(cli q stats --json)" 'j["fabric"]["sm_changes"]')
"$LAB" sm --name "$name" restart >/dev/null
deadline=$((SECONDS + 120))
until (( $(jq_py "$(cli q stats --json)" 'j["fabric"]["sm_changes"]') > before )); do
  ((SECONDS < deadline)) || fail "same-LID SM restart not noticed within 120 s while idle"
  sleep 1
done
pass "same-LID SM restart noticed while idle, from the SA side"
wait_resolving q "$(host "$name" h0021 gid)"
pass "resolving after the restart"
