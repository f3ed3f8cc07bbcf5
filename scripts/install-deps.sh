#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Installs the Debian packages ibat needs to build, test and run its lab.
# Idempotent: only missing packages are installed (apt-get update runs once, when needed).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libasio-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libspdlog-dev libfmt-dev
  libibumad-dev libibmad-dev libibverbs-dev libpcap-dev libmnl-dev
  opensm ibsim-utils libumad2sim0 infiniband-diags ibacm
  gnuplot-nox python3 procps ccache libtsan2
  dpkg-dev lintian
  debhelper   # dpkg-buildpackage of debian/ (make package; compat 13, dh_installsystemd)
  rpm rpmlint # rpmbuild of packaging/rpm/ibat.spec and its lint (make package; not EL9's rpm)
  prometheus  # promtool: the Prometheus exposition parser for the stats --prometheus test
  systemd     # systemd-analyze: the unit file test (tests/package/unit_verify_test.sh)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: need root to install: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
