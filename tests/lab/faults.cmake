# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Fault-injection suite (docs/reliability.md): ctest `faults.NAME`, labels lab + faults, one fabric each.
# Included from tests/lab/CMakeLists.txt (each test runs through run_test.sh: ibat_add_lab_ctest);
# needs ibatd, ibat and ibat-load in the same build.
function(ibat_add_fault_test name script timeout)
  ibat_add_lab_ctest(faults.${name} TIMEOUT ${timeout} LABELS lab faults ENVIRONMENT ${IBAT_LAB_TEST_ENV}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/${script})
endfunction()

ibat_add_fault_test(sm_restart     faults_sm_restart.sh     300)
ibat_add_fault_test(sm_kill        faults_sm_kill.sh        300)
ibat_add_fault_test(sm_failover    faults_sm_failover.sh    300)
ibat_add_fault_test(new_lids       faults_new_lids.sh       300)
ibat_add_fault_test(link           faults_link.sh           300)
ibat_add_fault_test(loss           faults_loss.sh           300)
ibat_add_fault_test(freeze         faults_freeze.sh         300)
ibat_add_fault_test(daemon_kill    faults_daemon_kill.sh    300)
ibat_add_fault_test(clients        faults_clients.sh        300)
ibat_add_fault_test(table          faults_table.sh          300)
ibat_add_fault_test(multi_rail     faults_multi_rail.sh     300)
ibat_add_fault_test(hotplug        faults_hotplug.sh        300)
ibat_add_fault_test(rmpp_loss      faults_rmpp_loss.sh      300)
