# End-to-end lab tests of the product (issue 4 §9): ctest `e2e.NAME`, label lab, one fabric each.
# Included from tests/lab/CMakeLists.txt. Binaries are passed as CMake target paths.
add_executable(e2e_libibat_client ${CMAKE_CURRENT_SOURCE_DIR}/e2e_libibat_client.c)
target_link_libraries(e2e_libibat_client PRIVATE ibat ibat_warnings)
add_executable(e2e_table_client ${CMAKE_CURRENT_SOURCE_DIR}/e2e_table_client.c)
target_link_libraries(e2e_table_client PRIVATE ibat ibat_warnings)

foreach(test cli libibat acm sigterm snapshot neigh_watch shared_table)
  add_test(NAME e2e.${test} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e_${test}.sh)
  set_tests_properties(e2e.${test} PROPERTIES LABELS lab TIMEOUT 150
    ENVIRONMENT "IBAT_LAB=${IBAT_LAB};IBAT_TOPOLOGY_DIR=${IBAT_TOPOLOGY_DIR};IBATD=$<TARGET_FILE:ibatd>;IBAT_CLI=$<TARGET_FILE:ibat_cli>;E2E_LIBIBAT_CLIENT=$<TARGET_FILE:e2e_libibat_client>;E2E_TABLE_CLIENT=$<TARGET_FILE:e2e_table_client>")
endforeach()
