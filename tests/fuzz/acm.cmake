# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# libFuzzer target of the ACM v1 codec (server/acm): a byte stream framed and decoded; seeds in corpus/acm.
ibat_add_fuzzer(acm ${CMAKE_CURRENT_LIST_DIR}/acm_fuzz.cpp ibat_acm_codec)
