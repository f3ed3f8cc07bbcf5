#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Builds ibat's distribution packages from this source tree (its tracked and untracked,
# not ignored, files: what `git ls-files -co --exclude-standard` lists):
#   deb  dpkg-buildpackage -us -uc -b with debian/ (debhelper, compat 13) in a copy of the tree at
#        OUT_DIR/deb/ibat (dpkg-buildpackage writes the .debs beside its source tree, so into
#        OUT_DIR/deb/, not into the repository's parent folder): ibat, libibat1, libibat-dev and
#        their -dbgsym packages.
#   rpm  rpmbuild -bs and -bb of packaging/rpm/ibat.spec with the tree as its Source0 tarball, in
#        the rpmbuild tree OUT_DIR/rpm: the source RPM and ibat, libibat, ibat-devel.
#   all  both (the default; `make package`).
# Prints the path of every package built, one a line. Lints them unless IBAT_PACKAGE_LINT=0:
# lintian on the .changes, rpmlint on the RPMs; their findings are printed, not fatal here
# (tests/package/package_test.sh fails on them).
#
# Debian's rpm is not EL9's: it lacks the macros EL9's systemd-rpm-macros and cmake-rpm-macros
# define and its rpm database holds none of the spec's BuildRequires. The rpm build below defines
# those macros as EL9 expands them (rpm_defines) and passes --nodeps; the spec itself is EL9's.
#
#   usage: scripts/package.sh [deb|rpm|all] [OUT_DIR]      (OUT_DIR defaults to build-pkg)
#   IBAT_DEB_VERSION=V   the .debs get version V (the copy's top debian/changelog entry is
#                        rewritten): the upgrade test's older build of the same tree.
#   IBAT_PACKAGE_JOBS=N  parallel compile jobs (default 2).
set -euo pipefail

what=${1:-all}
case $what in deb|rpm|all) ;; *) echo "usage: package.sh [deb|rpm|all] [OUT_DIR]" >&2; exit 2 ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${2:-$src/build-pkg}")
jobs=${IBAT_PACKAGE_JOBS:-2}
lint=${IBAT_PACKAGE_LINT:-1}
mkdir -p "$out"

# The CMake project version is the packages' upstream version.
version=$(sed -n 's/^project(ibat VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[[ -n $version ]] || { echo "package: no project(ibat VERSION ...) in CMakeLists.txt" >&2; exit 1; }
# debhelper (compat 13) points HOME at a temporary folder for the build, which would hide the
# caller's ccache: name the cache itself so rebuilds of the same tree are cheap.
if command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-$(ccache -k cache_dir)}
fi
# The changelog's date, and so the packages' file dates: the last commit's.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)}

# The tree's files, without build folders and other ignored files.
tree_files() {
  local f
  git -C "$src" ls-files -z -co --exclude-standard |
    while IFS= read -r -d '' f; do [[ -e $src/$f || -L $src/$f ]] && printf '%s\0' "$f"; done
}

build_deb() {
  local dir="$out/deb" copy="$out/deb/ibat"
  rm -rf "$copy" "$dir"/*.deb "$dir"/*.ddeb "$dir"/*.changes "$dir"/*.buildinfo
  mkdir -p "$copy"
  (cd "$src" && tree_files | tar --null -T - -cf -) | tar -xf - -C "$copy"
  local changelog_version
  changelog_version=$(cd "$copy" && dpkg-parsechangelog -S Version)
  [[ ${changelog_version%%[-~+]*} == "$version" ]] || {
    echo "package: debian/changelog's version $changelog_version is not CMakeLists.txt's $version" >&2; exit 1; }
  if [[ -n ${IBAT_DEB_VERSION:-} ]]; then
    sed -i "1s/(.*)/($IBAT_DEB_VERSION)/" "$copy/debian/changelog"
  fi
  (cd "$copy" && DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}" \
     dpkg-buildpackage -us -uc -b >"$dir/build.log" 2>&1) ||
    { tail -40 "$dir/build.log" >&2; echo "package: dpkg-buildpackage failed (log: $dir/build.log)" >&2; exit 1; }
  ls "$dir"/*.deb
  if ((lint)); then
    lintian --info --display-info --show-overrides "$dir"/*.changes >&2 || true
  fi
}

# What EL9 defines and Debian's rpm does not (the spec uses them as EL9 spells them):
# systemd-rpm-macros' scriptlets, as EL9 (systemd 252) expands them, each on one line, and
# cmake-rpm-macros' %cmake, %cmake_build, %cmake_install (the generator: cmake's default), and
# the parallel jobs.
rpm_defines=(
  --define "_unitdir /usr/lib/systemd/system"
  --define 'systemd_post() if [ $1 -eq 1 ] && [ -x "/usr/lib/systemd/systemd-update-helper" ]; then /usr/lib/systemd/systemd-update-helper install-system-units %{?*} || :; fi'
  --define 'systemd_preun() if [ $1 -eq 0 ] && [ -x "/usr/lib/systemd/systemd-update-helper" ]; then /usr/lib/systemd/systemd-update-helper remove-system-units %{?*} || :; fi'
  --define 'systemd_postun_with_restart() if [ $1 -ge 1 ] && [ -x "/usr/lib/systemd/systemd-update-helper" ]; then /usr/lib/systemd/systemd-update-helper mark-restart-system-units %{?*} || :; fi'
  --define '__cmake_builddir redhat-linux-build'
  --define 'cmake CFLAGS="%{optflags}" CXXFLAGS="%{optflags}" LDFLAGS="%{?build_ldflags}" cmake -S . -B %{__cmake_builddir} -DCMAKE_INSTALL_PREFIX:PATH=%{_prefix} -DCMAKE_INSTALL_DO_STRIP:BOOL=OFF'
  --define 'cmake_build cmake --build %{__cmake_builddir} %{?_smp_mflags} --verbose'
  --define 'cmake_install DESTDIR="%{buildroot}" cmake --install %{__cmake_builddir}'
  --define "_smp_mflags -j$jobs"
  # Debian's own flaw: its brp-compress (man pages to .gz, as on EL9) uses bash's `read -d` but
  # runs under /bin/sh (dash) and compresses nothing.
  --define '__brp_compress /bin/bash %{_rpmconfigdir}/brp-compress %{?_prefix}'
)

build_rpm() {
  local top="$out/rpm"
  rm -rf "$top"
  mkdir -p "$top"/{SOURCES,SPECS,BUILD,RPMS,SRPMS}
  # Source0: the tree as ibat-VERSION.tar.gz (rpmbuild's %setup unpacks it).
  (cd "$src" && tree_files | tar --null -T - --transform "s,^,ibat-$version/," \
     --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner -czf "$top/SOURCES/ibat-$version.tar.gz")
  local spec_version
  spec_version=$(sed -n 's/^Version:[[:space:]]*//p' "$src/packaging/rpm/ibat.spec")
  [[ $spec_version == "$version" ]] || {
    echo "package: packaging/rpm/ibat.spec's Version $spec_version is not CMakeLists.txt's $version" >&2; exit 1; }
  cp "$src/packaging/rpm/ibat.spec" "$top/SPECS/"
  # --nodeps: the spec's BuildRequires are EL9 package names, not in Debian's (empty) rpm database;
  # scripts/install-deps.sh installed their Debian counterparts.
  rpmbuild --define "_topdir $top" "${rpm_defines[@]}" --nodeps -ba "$top/SPECS/ibat.spec" >"$top/build.log" 2>&1 ||
    { tail -40 "$top/build.log" >&2; echo "package: rpmbuild failed (log: $top/build.log)" >&2; exit 1; }
  ls "$top"/SRPMS/*.rpm "$top"/RPMS/*/*.rpm
  if ((lint)); then
    rpmlint -r "$src/packaging/rpm/ibat.rpmlintrc" "$top/SPECS/ibat.spec" "$top"/SRPMS/*.rpm "$top"/RPMS/*/*.rpm >&2 || true
  fi
}

case $what in
  deb) build_deb ;;
  rpm) build_rpm ;;
  all) build_deb; build_rpm ;;
esac
