# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# libFuzzer target of the lab's kernel MAD layer twin: the RMPP reassembler fed any segment stream
# (seeds in corpus/umad_twin_rmpp).
ibat_add_fuzzer(umad_twin_rmpp ${CMAKE_CURRENT_LIST_DIR}/umad_twin_rmpp_fuzz.cpp)
target_sources(fuzz_umad_twin_rmpp PRIVATE ${PROJECT_SOURCE_DIR}/lab/umad-twin/rmpp.cpp
                                           ${PROJECT_SOURCE_DIR}/lab/umad-twin/rmpp_window.cpp)
target_include_directories(fuzz_umad_twin_rmpp PRIVATE ${PROJECT_SOURCE_DIR}/lab/umad-twin)
