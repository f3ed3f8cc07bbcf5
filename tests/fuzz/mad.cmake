# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# libFuzzer targets of the mad/ wire codecs, one per decoder; seeds in corpus/mad_<name>/.
foreach(name header sa sa_table path_record node_record switch_info_record mcmember_record inform_info notice smp port_info sm_info)
  ibat_add_fuzzer(mad_${name} ${CMAKE_CURRENT_LIST_DIR}/mad_${name}.cpp ibat_mad)
endforeach()
