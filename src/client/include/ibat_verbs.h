// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
/* ibat_verbs.h: turn an ibat_path (ibat.h) into what libibverbs and librdmacm take, as plain inline C.
 * Include it only in programs that use verbs: it pulls in <infiniband/verbs.h> and <infiniband/sa.h>
 * (Debian libibverbs-dev); ibat.h itself stays free of them. Nothing here is part of libibat's ABI.
 *
 *   ibat_path p;                       // from ibat_resolve_sync()
 *   struct ibv_ah_attr ah;             // for a UD address handle
 *   ibat_path_to_ibv_ah_attr(&p, port_num, sgid_index, port_attr.lmc, &ah);
 *   struct ibv_ah* h = ibv_create_ah(pd, &ah);
 *
 *   struct ibv_path_data d = {0};      // for rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, ...)
 *   ibat_path_to_ibv_path_record(&p, &d.path);
 *   d.flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY | IBV_PATH_FLAG_BIDIRECTIONAL;  (what the kernel requires)
 *   rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &d, sizeof d);
 */
#ifndef IBAT_VERBS_H
#define IBAT_VERBS_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/sa.h>
#include <infiniband/verbs.h>

#include "ibat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The upper 8 bytes of a GID: equal for two GIDs on the same subnet. */
static inline int ibat_verbs_same_subnet_(const ibat_gid* a, const ibat_gid* b) {
  return memcmp(a->raw, b->raw, 8) == 0;
}

/* Address handle attributes for sending to path->dlid from local port `port_num`, as the kernel
 * builds them from a PathRecord: DLID, SL, static rate (the IBA code, which is enum ibv_rate),
 * src_path_bits = the SLID's low `lmc` bits (ibv_port_attr.lmc). A GRH (is_global = 1, with
 * DGID, flow label, hop limit, traffic class and `sgid_index`) when the destination is off-subnet:
 * hop limit > 1 or a DGID subnet prefix other than the SGID's. Returns 0, or -1 (out untouched)
 * for a NULL argument, DLID 0 or an lmc above 7. */
static inline int ibat_path_to_ibv_ah_attr(const ibat_path* path, uint8_t port_num, uint8_t sgid_index, uint8_t lmc,
                                           struct ibv_ah_attr* out) {
  if (path == NULL || out == NULL || path->dlid == 0 || lmc > 7) return -1;
  memset(out, 0, sizeof *out);
  out->dlid = path->dlid;
  out->sl = (uint8_t)(path->sl & 0xF);
  out->src_path_bits = (uint8_t)(path->slid & ((1u << lmc) - 1u));
  out->static_rate = (uint8_t)(path->rate & 0x3F);
  out->port_num = port_num;
  if (path->hop_limit > 1 || !ibat_verbs_same_subnet_(&path->dgid, &path->sgid)) {
    out->is_global = 1;
    memcpy(out->grh.dgid.raw, path->dgid.raw, 16);
    out->grh.flow_label = path->flow_label & 0xFFFFFu;
    out->grh.sgid_index = sgid_index;
    out->grh.hop_limit = path->hop_limit;
    out->grh.traffic_class = path->tclass;
  }
  return 0;
}

/* The path as struct ibv_path_record: the IBA PathRecord layout, every multi-byte field big-endian,
 * as librdmacm and ibacm carry it. Reversible with one path; MTU, rate and packet lifetime with
 * selector "exactly" (2); service ID, QoS class and preference 0. Returns 0, or -1 (out untouched)
 * for a NULL argument or DLID 0. */
static inline int ibat_path_to_ibv_path_record(const ibat_path* path, struct ibv_path_record* out) {
  if (path == NULL || out == NULL || path->dlid == 0) return -1;
  memset(out, 0, sizeof *out);
  memcpy(out->dgid.raw, path->dgid.raw, 16);
  memcpy(out->sgid.raw, path->sgid.raw, 16);
  out->dlid = htobe16(path->dlid);
  out->slid = htobe16(path->slid);
  out->flowlabel_hoplimit = htobe32(((path->flow_label & 0xFFFFFu) << 8) | path->hop_limit);
  out->tclass = path->tclass;
  out->reversible_numpath = 0x80 | 1;
  out->pkey = htobe16(path->pkey);
  out->qosclass_sl = htobe16((uint16_t)(path->sl & 0xF));
  out->mtu = (uint8_t)((2u << 6) | (path->mtu & 0x3Fu));
  out->rate = (uint8_t)((2u << 6) | (path->rate & 0x3Fu));
  out->packetlifetime = (uint8_t)((2u << 6) | (path->pkt_life & 0x3Fu));
  return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* IBAT_VERBS_H */
