# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# libFuzzer targets of ibatd's file loaders: the warm-cache snapshot and the TOML config.
# Seeds in corpus/snapshot and corpus/config.
ibat_add_fuzzer(snapshot ${CMAKE_CURRENT_LIST_DIR}/server_snapshot_fuzz.cpp ibat_snapshot)
ibat_add_fuzzer(config ${CMAKE_CURRENT_LIST_DIR}/server_config_fuzz.cpp ibat_daemon_config)
