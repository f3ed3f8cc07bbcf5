# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# libFuzzer targets of the kernel/ codecs: local SA netlink datagrams and rtnetlink neighbour
# messages, /proc/loadavg texts and uevents; seeds in corpus/kernel_local_sa, corpus/kernel_neighbour,
# corpus/kernel_loadavg, corpus/kernel_uevent.
ibat_add_fuzzer(kernel_local_sa ${CMAKE_CURRENT_LIST_DIR}/kernel_local_sa_fuzz.cpp ibat_kernel_codec)
ibat_add_fuzzer(kernel_neighbour ${CMAKE_CURRENT_LIST_DIR}/kernel_neighbour_fuzz.cpp ibat_kernel_neigh)
ibat_add_fuzzer(kernel_loadavg ${CMAKE_CURRENT_LIST_DIR}/kernel_loadavg_fuzz.cpp ibat_run_queue)
ibat_add_fuzzer(kernel_uevent ${CMAKE_CURRENT_LIST_DIR}/kernel_uevent_fuzz.cpp ibat_kernel_devices)
