#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The package tests' fixture: builds, with scripts/package.sh, an older .deb of this tree (its
# changelog version lowered to VERSION~old1, for the upgrade test) into OUT_DIR/old/, then the
# .debs and RPMs of the tree as it is into OUT_DIR/deb/ and OUT_DIR/rpm/. Both .deb builds compile
# in the same folder (OUT_DIR/deb/ibat), so the second one is a ccache hit.
#   usage: build_packages.sh SOURCE_DIR OUT_DIR
set -euo pipefail
src=${1:?usage: build_packages.sh SOURCE_DIR OUT_DIR}
out=${2:?usage: build_packages.sh SOURCE_DIR OUT_DIR}
version=$(cd "$src" && dpkg-parsechangelog -S Version)
export IBAT_PACKAGE_LINT=0   # the tests lint
rm -rf "$out/old"
IBAT_DEB_VERSION="$version~old1" "$src/scripts/package.sh" deb "$out" >/dev/null
mkdir -p "$out/old"
mv "$out"/deb/*.deb "$out/old/"
"$src/scripts/package.sh" all "$out"
