// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fuzzes the pcap reader and ARP scan: any file scans or errors, and a scan never reports more ARP
// packets than frames.
#include <cstdlib>

#include "ipoib/pcap.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ibat::ipoib;
  auto r = scan_pcap_arp({data, size});
  if (const auto* scan = std::get_if<PcapArpScan>(&r)) {
    if (scan->arp.size() + scan->rejected.size() + scan->not_ipoib_arp != scan->records) std::abort();
  }
  return 0;
}
