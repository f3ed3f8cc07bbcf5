# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Native protocol codec fuzzers: the frame splitter fed arbitrary chunks, and every payload decoder.
ibat_add_fuzzer(protocol_stream ${CMAKE_CURRENT_SOURCE_DIR}/protocol_stream_fuzz.cpp ibat_protocol)
