# libFuzzer targets of the kernel/ codecs: local SA netlink datagrams and rtnetlink neighbour
# messages; seeds in corpus/kernel_local_sa, corpus/kernel_neighbour.
ibat_add_fuzzer(kernel_local_sa ${CMAKE_CURRENT_LIST_DIR}/kernel_local_sa_fuzz.cpp ibat_kernel_codec)
ibat_add_fuzzer(kernel_neighbour ${CMAKE_CURRENT_LIST_DIR}/kernel_neighbour_fuzz.cpp ibat_kernel_neigh)
