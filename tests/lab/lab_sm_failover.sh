#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# lab.sm_failover: with a standby OpenSM, `sm failover` moves the SM LID of every port to the
# standby's LID; `sm start` brings the higher-priority master back.
source "$(dirname "$0")/lab_lib.sh"
name=$(lab_name smf)
lab_up "$name" --topology "$TOPO/fattree-32.net" --sm-node h0000 --standby-sm h0031 >/dev/null

master_lid=$(host_field "$name" h0000 lid)
standby_lid=$(host_field "$name" h0031 lid)
expect_eq "SM LID seen by h0010 before" "$(sm_lid "$name" h0010)" "$master_lid"

start=$(date +%s.%N)
"$LAB" sm --name "$name" failover
echo "failover took $(python3 -c "import sys; print(round($(date +%s.%N) - $start, 2))") s"
for node in h0010 h0020 h0000; do
  expect_eq "SM LID seen by $node after failover" "$(sm_lid "$name" $node)" "$standby_lid"
done
"$LAB" run --name "$name" --node h0010 -- sminfo | grep -q "sm lid $standby_lid .*SMINFO_MASTER" ||
  fail "sminfo does not show the standby (LID $standby_lid) as MASTER"
pass "sminfo: the standby is MASTER"

"$LAB" sm --name "$name" start >/dev/null
"$LAB" run --name "$name" --node h0010 -- sminfo | grep -q "sm lid $master_lid .*SMINFO_MASTER" ||
  fail "the restarted master (LID $master_lid) did not take over"
pass "master back after sm start"
