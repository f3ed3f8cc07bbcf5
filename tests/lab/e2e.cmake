# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# End-to-end lab tests of the product: ctest `e2e.NAME`, label lab, one fabric each.
# Included from tests/lab/CMakeLists.txt. Binaries are passed as CMake target paths.
add_executable(e2e_libibat_client ${CMAKE_CURRENT_SOURCE_DIR}/e2e_libibat_client.c)
target_link_libraries(e2e_libibat_client PRIVATE ibat ibat_warnings)
add_executable(e2e_table_client ${CMAKE_CURRENT_SOURCE_DIR}/e2e_table_client.c)
target_link_libraries(e2e_table_client PRIVATE ibat ibat_warnings)

# Timeouts: 150 s unless set here.
# e2e.quiet waits out a 120 s idle window and up to 90 s for the routine SM check.
set(e2e_timeout_quiet 400)
# e2e.prefetch brings up a 480-host tree twice over (start and a restart with new LIDs).
set(e2e_timeout_prefetch 300)
# e2e.multi_rail waits out a 120 s idle window of a four-port ibatd.
set(e2e_timeout_multi_rail 400)
# e2e.qos compares about 70 resolves with saquery, each a process of its own: 100 s alone, 122 s in
# a loaded CI run, past the default 150 s when the machine is busier still.
set(e2e_timeout_qos 300)
# e2e.fair_users holds a 70 x 1,024 flood for the 14 s of the other user's and the kernel's requests:
# 91 s alone.
set(e2e_timeout_fair_users 300)

# Each through run_test.sh (ibat_add_lab_ctest in CMakeLists.txt): a process left running fails it.
foreach(test cli libibat acm librdmacm sigterm snapshot neigh_watch local_sa quiet_log quiet shared_table prefetch multi_rail hotplug qos
    hca_events notify fair_users)
  if(NOT DEFINED e2e_timeout_${test})
    set(e2e_timeout_${test} 150)
  endif()
  ibat_add_lab_ctest(e2e.${test} TIMEOUT ${e2e_timeout_${test}} LABELS lab
    ENVIRONMENT "IBAT_LAB=${IBAT_LAB};IBAT_TOPOLOGY_DIR=${IBAT_TOPOLOGY_DIR};IBATD=$<TARGET_FILE:ibatd>;IBAT_CLI=$<TARGET_FILE:ibat_cli>;E2E_LIBIBAT_CLIENT=$<TARGET_FILE:e2e_libibat_client>;KERNEL_TWIN=$<TARGET_FILE:ibat-kernel-twin>;IBAT_LOAD=$<TARGET_FILE:ibat-load>;E2E_TABLE_CLIENT=$<TARGET_FILE:e2e_table_client>"
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e_${test}.sh)
endforeach()
