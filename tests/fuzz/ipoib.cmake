# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# libFuzzer targets of the ipoib/ codecs: the ARP decoder and the pcap reader; seeds in corpus/arp, corpus/pcap.
ibat_add_fuzzer(arp ${CMAKE_CURRENT_LIST_DIR}/ipoib_arp_fuzz.cpp ibat_ipoib)
ibat_add_fuzzer(pcap ${CMAKE_CURRENT_LIST_DIR}/ipoib_pcap_fuzz.cpp ibat_ipoib)
