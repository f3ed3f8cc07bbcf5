#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# One project version everywhere: CMake's project(ibat VERSION ...) is the source; `ibatd
# --version`, `ibat --version` (compiled from it), the ibat.pc CMake configured, debian/changelog's
# top entry (its upstream part: 0.2.0 of 0.2.0-1), the RPM spec's Version, the man pages' .TH lines
# and NEWS's newest heading must all say it. libibat's soname and the shared table's format
# version are not the project version and are not checked here.
#   usage: version_test.sh CMAKE_VERSION SOURCE_DIR IBATD IBAT IBAT_PC
set -uo pipefail
(($# == 5)) || { echo "usage: version_test.sh CMAKE_VERSION SOURCE_DIR IBATD IBAT IBAT_PC" >&2; exit 2; }
want=$1 src=$2 ibatd=$3 ibat=$4 pc=$5
failures=0
check() {  # check WHAT GOT
  if [[ $2 == "$want" ]]; then echo "ok: $1: $2"; else echo "FAIL: $1 says '$2', CMake's project version is $want" >&2; failures=$((failures + 1)); fi
}

[[ $want =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "FAIL: CMake's version '$want' is not X.Y.Z" >&2; exit 1; }
check "CMakeLists.txt project()" "$(sed -n 's/^project(ibat VERSION \([^ )]*\).*/\1/p' "$src/CMakeLists.txt")"
out=$("$ibatd" --version 2>&1); check "ibatd --version ('$out')" "$(sed -n 's/^ibatd \([^ ]*\)$/\1/p' <<<"$out")"
out=$("$ibat" --version 2>&1); check "ibat --version ('$out')" "$(sed -n 's/^ibat \([^ ]*\)$/\1/p' <<<"$out")"
check "ibat.pc Version" "$(sed -n 's/^Version: *//p' "$pc")"
deb=$(cd "$src" && dpkg-parsechangelog -S Version 2>/dev/null || sed -n '1s/^ibat (\([^)]*\)).*/\1/p' debian/changelog)
check "debian/changelog ($deb)" "${deb%-*}"
check "packaging/rpm/ibat.spec Version" "$(sed -n 's/^Version:[[:space:]]*//p' "$src/packaging/rpm/ibat.spec")"
for man in packaging/ibatd.8 packaging/ibat.1; do
  check "$man .TH" "$(sed -n 's/^\.TH .* "ibat \([^"]*\)" .*/\1/p' "$src/$man")"
done
check "NEWS newest heading" "$(grep -m1 -o '^ibat [0-9][^ ]*' "$src/NEWS" | cut -d' ' -f2)"

((failures == 0)) || { echo "$failures place(s) disagree with CMake's version $want" >&2; exit 1; }
echo "version OK: $want everywhere"
