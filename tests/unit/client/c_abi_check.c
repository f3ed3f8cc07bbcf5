// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
/* Compiled as strict C99: ibat.h must be plain C, and its basic calls must work from C. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ibat.h"

int main(void) {
  ibat_t* h = NULL;
  ibat_target t;
  char text[64];
  if (ibat_open("/nonexistent/ibatd.sock", &h) != IBAT_ECONNECT || errno != ENOENT || h != NULL) {
    fprintf(stderr, "ibat_open on a missing socket did not fail with IBAT_ECONNECT/ENOENT\n");
    return 1;
  }
  if (ibat_parse_target("fe80::1", &t) != IBAT_OK || t.type != IBAT_TARGET_GID ||
      ibat_format_target(&t, text, sizeof text) != IBAT_OK || strcmp(text, "fe80::1") != 0) {
    fprintf(stderr, "GID text round trip failed\n");
    return 1;
  }
  if (strcmp(ibat_strerror(IBAT_ECONNECT), "cannot connect to ibatd") != 0) return 1;
  return 0;
}
