# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# libFuzzer target of libibat's shared path table reader against arbitrary table bytes.
# Seeds in corpus/shm_table.
ibat_add_fuzzer(shm_table ${CMAKE_CURRENT_LIST_DIR}/shm_table_fuzz.cpp ibat_shm)
