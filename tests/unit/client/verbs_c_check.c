// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
/* Compiled as C: ibat_verbs.h must be usable from C programs. Returns 0 when both helpers work. */
#include "ibat_verbs.h"

int ibat_verbs_c_check(void);

int ibat_verbs_c_check(void) {
  ibat_path p;
  struct ibv_ah_attr ah;
  struct ibv_path_data d;
  memset(&p, 0, sizeof p);
  memset(&d, 0, sizeof d);
  p.dlid = 7;
  p.slid = 3;
  p.hop_limit = 2;
  if (ibat_path_to_ibv_ah_attr(&p, 1, 0, 0, &ah) != 0 || ah.dlid != 7 || ah.is_global != 1) return 1;
  if (ibat_path_to_ibv_path_record(&p, &d.path) != 0 || be16toh(d.path.dlid) != 7) return 2;
  return 0;
}
