#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The RPMs of packaging/rpm/ibat.spec (built on this Debian machine by scripts/package.sh:
# tests/package/build_packages.sh put them in PKG_DIR/rpm) against the .debs of debian/: each RPM
# holds the files of its .deb counterpart (ibat = ibat, libibat = libibat1, ibat-devel =
# libibat-dev), no more, no less, apart from these distribution differences (docs/packaging.md):
#   units         /lib/systemd/system (Debian 12)          /usr/lib/systemd/system (%{_unitdir})
#   libraries     /usr/lib/<multiarch>                     /usr/lib64 (%{_libdir})
#   copyright     /usr/share/doc/<package>/ (copyright, changelog.gz)   /usr/share/licenses/<package>/ (copyright, COPYING, LICENSE.GPL-2)
#   docs          /usr/share/doc/ibat/, NEWS gzipped (dh_compress)  /usr/share/doc/ibat/
#   lintian       /usr/share/lintian/overrides/<package>   -
#   build IDs     -                                        /usr/lib/.build-id/ links
# and the debug packages (-dbgsym, -debuginfo) left out. The same files are configuration
# (conffiles = %config(noreplace)); the scriptlets are the %systemd_* ones; rpmlint finds no error
# in the spec, the source RPM and the binary RPMs.
#   usage: rpm_test.sh SOURCE_DIR PKG_DIR
set -euo pipefail
src=${1:?usage: rpm_test.sh SOURCE_DIR PKG_DIR}
pkgs=${2:?usage: rpm_test.sh SOURCE_DIR PKG_DIR}
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

version=$(cd "$src" && dpkg-parsechangelog -S Version)
upstream=${version%-*}  # the RPMs' Version (their Release is the spec's own)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
rpm_libdir=$(rpm --eval '%{_libdir}')
rpm_arch=$(rpm --eval '%{_arch}')
srpm=$(ls "$pkgs"/rpm/SRPMS/ibat-"$upstream"-*.src.rpm)
echo "source RPM: $srpm"
rpm_of() { ls "$pkgs/rpm/RPMS/$rpm_arch/$1-$upstream"-*."$rpm_arch".rpm; }

# A package's files and links (not its folders; dpkg-deb -c, rpm -qp with the modes), one a line,
# sorted; the .deb's mapped to the RPM's places.
deb_files() {
  dpkg-deb -c "$pkgs/deb/${1}_${version}_$arch.deb" | awk '$1 !~ /^d/ {print $6}' |
    sed -e 's,^\./,/,' \
        -e "s,^/lib/systemd/system/,/usr/lib/systemd/system/," \
        -e "s,^/usr/lib/$multiarch/,$rpm_libdir/," \
        -e 's,^\(/usr/share/doc/.*\)\.gz$,\1,' |
    grep -v -e "^/usr/share/doc/[^/]*/copyright$" -e "^/usr/share/doc/[^/]*/changelog\(\.Debian\)\?$" \
      -e "^/usr/share/lintian/overrides/" | sort
}
rpm_files() {
  rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$(rpm_of "$1")" | awk '$1 !~ /^d/ {print $2}' |
    grep -v -e "^/usr/share/licenses/" -e "^/usr/lib/.build-id" | sort
}

for pair in ibat:ibat libibat1:libibat libibat-dev:ibat-devel; do
  d=${pair%%:*} r=${pair##*:}
  rpm_path=$(rpm_of "$r") || { fail "no RPM $r"; continue; }
  echo "== $r ($rpm_path) against $d"
  rpm -qlp "$rpm_path"
  if ! diff -u --label "$d.deb" --label "$r.rpm" <(deb_files "$d") <(rpm_files "$r"); then
    fail "$r.rpm and $d.deb hold different files"
  fi
  [[ -n $(rpm_files "$r") ]] || fail "$r.rpm holds no file"
done
# Only these RPMs (and their debug packages) were built.
built=$(cd "$pkgs/rpm/RPMS/$rpm_arch" && ls | grep -v -e '-debuginfo-' -e '-debugsource-' | sed "s/-$upstream-.*//" | sort | tr '\n' ' ')
[[ $built == "ibat ibat-devel libibat " ]] || fail "the RPMs built are '$built'"

# Configuration files: the .deb's conffiles, as %config(noreplace).
rpm_config=$(rpm -qp --qf '[%{FILEFLAGS:fflags}|%{FILENAMES}\n]' "$(rpm_of ibat)" | awk -F'|' '$1 ~ /c/ && $1 ~ /n/ {print $2}' | sort | tr '\n' ' ')
deb_config=$(dpkg-deb -I "$pkgs/deb/ibat_${version}_$arch.deb" conffiles | sort | tr '\n' ' ')
[[ $rpm_config == "$deb_config" ]] || fail "%config(noreplace) files '$rpm_config' are not the conffiles '$deb_config'"

# Scriptlets: EL9's %systemd_* expansions for ibatd.service and the timer, ldconfig for libibat.
scripts=$(rpm -qp --scripts "$(rpm_of ibat)")
echo "$scripts"
grep -q 'systemd-update-helper install-system-units ibatd.service ibat-textfile.timer' <<<"$scripts" || fail "no %systemd_post"
grep -q 'systemd-update-helper remove-system-units ibatd.service ibat-textfile.timer' <<<"$scripts" || fail "no %systemd_preun"
grep -q 'systemd-update-helper mark-restart-system-units ibatd.service' <<<"$scripts" || fail "no %systemd_postun_with_restart"
rpm -qp --scripts "$(rpm_of libibat)" | grep '/sbin/ldconfig' >/dev/null || fail "libibat does not run ldconfig"
# The library's soname is provided, and the daemon's package requires it.
rpm -qp --provides "$(rpm_of libibat)" | grep '^libibat.so.1()' >/dev/null || fail "libibat does not provide libibat.so.1()"
rpm -qp --requires "$(rpm_of ibat)" | grep '^libibat.so.1()' >/dev/null || fail "ibat does not require libibat.so.1()"

# rpmlint with packaging/rpm/ibat.rpmlintrc (its filters say why): no error (warnings are printed).
echo "== rpmlint"
if ! rpmlint -r "$src/packaging/rpm/ibat.rpmlintrc" "$src/packaging/rpm/ibat.spec" "$srpm" "$(rpm_of ibat)" "$(rpm_of libibat)" "$(rpm_of ibat-devel)"; then
  fail "rpmlint reports errors"
fi

((failures == 0)) || { echo "$failures check(s) failed" >&2; exit 1; }
echo "rpm OK"
