// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
/* e2e.shared_table: a C program linking libibat, run against a real ibatd on the lab by
 * e2e_shared_table.sh. For each GID it resolves through a handle without the shared table
 * (IBAT_SHARED_TABLE=0: the socket) and then through a handle that maps it, and requires the same
 * path (every field and the 64-byte wire record; state valid) from both. It then prints the hits
 * it made, which the script finds in `ibat stats` as table_hits.
 * Usage: e2e_table_client SOCKET GID...   Exit 0 when every check passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibat.h"

#define LOOKUPS 1000 /* table resolves per destination */

static int same_path(const ibat_path* a, const ibat_path* b) {
  return memcmp(&a->dgid, &b->dgid, sizeof a->dgid) == 0 && memcmp(&a->sgid, &b->sgid, sizeof a->sgid) == 0 &&
         a->dlid == b->dlid && a->slid == b->slid && a->pkey == b->pkey && a->sl == b->sl && a->mtu == b->mtu &&
         a->rate == b->rate && a->pkt_life == b->pkt_life && a->hop_limit == b->hop_limit &&
         a->tclass == b->tclass && a->flow_label == b->flow_label && a->state == b->state &&
         memcmp(a->record, b->record, sizeof a->record) == 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SOCKET GID...\n", argv[0]);
    return 2;
  }
  ibat_t *sock_h = NULL, *table_h = NULL;
  setenv("IBAT_SHARED_TABLE", "0", 1);
  if (ibat_open(argv[1], &sock_h) != IBAT_OK) return fprintf(stderr, "cannot open %s\n", argv[1]), 1;
  unsetenv("IBAT_SHARED_TABLE");
  if (ibat_open(argv[1], &table_h) != IBAT_OK) return fprintf(stderr, "cannot open %s\n", argv[1]), 1;
  int failures = 0;
  unsigned long hits = 0;
  for (int i = 2; i < argc; ++i) {
    ibat_target t;
    if (ibat_parse_target(argv[i], &t) != IBAT_OK) return fprintf(stderr, "bad GID %s\n", argv[i]), 2;
    ibat_path socket_path, table_path;
    int rc = ibat_resolve_sync(sock_h, &t, NULL, &socket_path);
    if (rc != IBAT_OK || socket_path.state != IBAT_STATE_VALID) {
      fprintf(stderr, "FAIL: socket resolve of %s: %s, state %u\n", argv[i], ibat_strerror(rc), socket_path.state);
      ++failures;
      continue;
    }
    for (int n = 0; n < LOOKUPS; ++n) {
      rc = ibat_resolve_sync(table_h, &t, NULL, &table_path);
      if (rc != IBAT_OK || !same_path(&socket_path, &table_path)) {
        fprintf(stderr, "FAIL: %s: table handle answered %s, dlid %u (socket: dlid %u)\n", argv[i], ibat_strerror(rc),
                table_path.dlid, socket_path.dlid);
        ++failures;
        break;
      }
      ++hits;
    }
  }
  ibat_close(table_h); /* sends the hit report */
  ibat_close(sock_h);
  printf("%lu\n", hits);
  return failures ? 1 : 0;
}
