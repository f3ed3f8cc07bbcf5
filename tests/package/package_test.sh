#!/usr/bin/env bash
# Builds the .deb from a build tree, lists it, extracts it into a throw-away root and checks that
# every file lands where the man pages, the systemd units and the README say (the textfile timer's
# script where its service runs it, the alert rules and dashboard), that the default
# config and the NHC check are conffiles, that pkg-config finds libibat in the extracted tree, and
# that lintian reports no error (its warnings are printed, not fatal).
#   usage: package_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=${1:?usage: package_test.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: package_test.sh SOURCE_DIR BUILD_DIR}
work=$(realpath "$(mktemp -d)")
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

deb=$("$src/scripts/package-deb.sh" "$build" "$work")
echo "package: $deb"
dpkg-deb -c "$deb"
root="$work/root"
dpkg -x "$deb" "$root"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir="usr/lib/$multiarch"

for f in usr/sbin/ibatd usr/bin/ibat; do
  [[ -f $root/$f && -x $root/$f ]] || fail "/$f is not an executable file"
done
for f in "$libdir/libibat.so.1" "$libdir/libibat.so" usr/include/ibat.h usr/include/ibat.hpp \
         "$libdir/pkgconfig/ibat.pc" usr/share/man/man8/ibatd.8.gz usr/share/man/man1/ibat.1.gz \
         lib/systemd/system/ibatd.service etc/ibat/ibatd.toml etc/nhc/scripts/ibat.nhc \
         usr/share/doc/ibat/copyright lib/systemd/system/ibat-textfile.service \
         lib/systemd/system/ibat-textfile.timer usr/share/ibat/prometheus/ibat-alerts.yml \
         usr/share/ibat/grafana/ibat-dashboard.json; do
  [[ -f $root/$f ]] || fail "/$f is missing"
done
# The textfile writer is where its service runs it from, and executable.
textfile_unit="$root/lib/systemd/system/ibat-textfile.service"
if [[ -f $textfile_unit ]]; then
  textfile_exec=$(sed -n 's/^ExecStart=//p' "$textfile_unit")
  [[ $textfile_exec == /usr/lib/ibat/ibat-textfile ]] || fail "ibat-textfile.service runs '$textfile_exec'"
  [[ -f $root$textfile_exec && -x $root$textfile_exec ]] || fail "$textfile_exec is not an executable file of the package"
fi
[[ -L $root/$libdir/libibat.so.1 ]] || fail "/$libdir/libibat.so.1 is not the SONAME link"

# The unit starts the packaged daemon with the packaged config.
unit="$root/lib/systemd/system/ibatd.service"
if [[ -f $unit ]]; then
  read -r -a exec_start < <(sed -n 's/^ExecStart=//p' "$unit")
  [[ -x $root${exec_start[0]} ]] || fail "the unit's ExecStart ${exec_start[0]} is not in the package"
  [[ ${exec_start[*]} == *"--config /etc/ibat/ibatd.toml"* ]] || fail "the unit does not pass --config /etc/ibat/ibatd.toml"
fi
# The man pages name the files the package installs.
zcat "$root/usr/share/man/man8/ibatd.8.gz" | grep -q '^\.I /etc/ibat/ibatd.toml' || fail "ibatd.8 does not name /etc/ibat/ibatd.toml"

dpkg-deb -e "$deb" "$work/control"
for f in /etc/ibat/ibatd.toml /etc/nhc/scripts/ibat.nhc; do
  grep -qx "$f" "$work/control/conffiles" || fail "$f is not a conffile"
done

# ibat.pc locates its prefix from its own place (${pcfiledir}/../../..): in the extracted tree it
# must name that tree's include and library folders.
pc() { PKG_CONFIG_PATH="$root/$libdir/pkgconfig" PKG_CONFIG_LIBDIR= pkg-config "$@" ibat; }
[[ $(realpath -m "$(pc --variable=includedir)") == "$root/usr/include" ]] ||
  fail "ibat.pc's includedir is $(pc --variable=includedir), not /usr/include of the package"
[[ $(realpath -m "$(pc --variable=libdir)") == "$root/$libdir" ]] ||
  fail "ibat.pc's libdir is $(pc --variable=libdir), not /$libdir of the package"
[[ $(pc --libs) == *"-libat"* ]] || fail "pkg-config --libs ibat gives '$(pc --libs)'"

if ! lintian --fail-on error --show-overrides "$deb"; then
  fail "lintian reports errors"
fi

((failures == 0)) || { echo "$failures check(s) failed" >&2; exit 1; }
echo "package OK"
