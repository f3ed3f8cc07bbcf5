#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# The .debs that debian/ builds (tests/package/build_packages.sh put them in PKG_DIR/deb): each
# file in the package the split says (ibat: daemon, CLI, units, config, monitoring glue; libibat1:
# the shared library; libibat-dev: headers, development link, pkg-config file) and where the man
# pages, the units and the README say; the conffiles; the maintainer scripts debhelper generated
# (ibatd.service enabled and started, the textfile timer neither, /var/lib/ibat removed on purge);
# libibat1's symbols file against the library's exports and ibat's dependency on it; pkg-config in
# the extracted tree; and lintian without an error or a warning (overrides each carry a reason).
#   usage: package_test.sh SOURCE_DIR PKG_DIR
set -euo pipefail
src=${1:?usage: package_test.sh SOURCE_DIR PKG_DIR}
pkgs=${2:?usage: package_test.sh SOURCE_DIR PKG_DIR}
work=$(realpath "$(mktemp -d)")
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

version=$(cd "$src" && dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir="usr/lib/$multiarch"
deb() { echo "$pkgs/deb/${1}_${version}_$arch.deb"; }
for p in ibat libibat1 libibat-dev; do
  [[ -f $(deb $p) ]] || { echo "FAIL: $(deb $p) was not built" >&2; exit 1; }
  echo "== $p"; dpkg-deb -c "$(deb $p)"
done

# Which package holds which file: each extracted into its own root, then all into one.
declare -A holds=(
  [ibat]="usr/sbin/ibatd usr/bin/ibat usr/share/man/man8/ibatd.8.gz usr/share/man/man1/ibat.1.gz
          lib/systemd/system/ibatd.service lib/systemd/system/ibat-textfile.service
          lib/systemd/system/ibat-textfile.timer etc/ibat/ibatd.toml etc/nhc/scripts/ibat.nhc
          usr/lib/ibat/ibat-textfile usr/share/ibat/prometheus/ibat-alerts.yml
          usr/share/ibat/grafana/ibat-dashboard.json usr/share/doc/ibat/copyright
          usr/share/doc/ibat/README.md"
  [libibat1]="$libdir/libibat.so.1 $libdir/libibat.so.1.0.0 usr/share/doc/libibat1/copyright"
  [libibat-dev]="usr/include/ibat.h usr/include/ibat.hpp usr/include/ibat_verbs.h $libdir/libibat.so
                 $libdir/pkgconfig/ibat.pc usr/share/doc/libibat-dev/copyright"
)
root="$work/root"
for p in ibat libibat1 libibat-dev; do
  dpkg -x "$(deb $p)" "$work/$p"
  dpkg -x "$(deb $p)" "$root"
  for f in ${holds[$p]}; do
    [[ -e $work/$p/$f || -L $work/$p/$f ]] || fail "$p does not hold /$f"
  done
  dpkg-deb -e "$(deb $p)" "$work/control-$p"
done
for f in usr/sbin/ibatd usr/bin/ibat usr/lib/ibat/ibat-textfile; do
  [[ -f $root/$f && -x $root/$f ]] || fail "/$f is not an executable file"
done
[[ -L $root/$libdir/libibat.so.1 ]] || fail "/$libdir/libibat.so.1 is not the SONAME link"
[[ -L $root/$libdir/libibat.so ]] || fail "/$libdir/libibat.so is not the development link"
# The textfile writer is where its service runs it from.
textfile_exec=$(sed -n 's/^ExecStart=//p' "$root/lib/systemd/system/ibat-textfile.service")
[[ $textfile_exec == /usr/lib/ibat/ibat-textfile ]] || fail "ibat-textfile.service runs '$textfile_exec'"
# The unit starts the packaged daemon with the packaged config.
read -r -a exec_start < <(sed -n 's/^ExecStart=//p' "$root/lib/systemd/system/ibatd.service")
[[ -x $root${exec_start[0]} ]] || fail "the unit's ExecStart ${exec_start[0]} is not in the package"
[[ ${exec_start[*]} == *"--config /etc/ibat/ibatd.toml"* ]] || fail "the unit does not pass --config /etc/ibat/ibatd.toml"
zcat "$root/usr/share/man/man8/ibatd.8.gz" | grep '^\.I /etc/ibat/ibatd.toml' >/dev/null || fail "ibatd.8 does not name /etc/ibat/ibatd.toml"
# The documents: NEWS (gzipped when large), every docs/*.md of the tree under the names the man
# pages and README.md cite (docs/NAME.md, not compressed), and the copyright file machine-readable
# with both licenses.
doc=$root/usr/share/doc/ibat
[[ -f $doc/NEWS || -f $doc/NEWS.gz ]] || fail "ibat holds no /usr/share/doc/ibat/NEWS"
for f in "$src"/docs/*.md; do
  [[ -f $doc/docs/${f##*/} ]] || fail "ibat does not hold /usr/share/doc/ibat/docs/${f##*/}"
done
for f in $( (zcat "$root"/usr/share/man/man*/ibat*.gz; cat "$src/README.md") | grep -o 'docs/[a-z-]*\.md' | sort -u); do
  [[ -f $doc/$f ]] || fail "the man pages or README.md cite $f, not in /usr/share/doc/ibat"
done
head -1 "$doc/copyright" | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
  fail "the copyright file is not machine-readable (DEP-5)"
grep -q '^License: GPL-2 or Linux-OpenIB$' "$doc/copyright" || fail "the copyright file does not name GPL-2 or Linux-OpenIB"

# Conffiles: the two files in /etc, nothing else.
conffiles=$(sort "$work/control-ibat/conffiles" | tr '\n' ' ')
[[ $conffiles == "/etc/ibat/ibatd.toml /etc/nhc/scripts/ibat.nhc " ]] || fail "ibat's conffiles are '$conffiles'"
for p in libibat1 libibat-dev; do
  [[ ! -s $work/control-$p/conffiles ]] || fail "$p has conffiles"
done

# Maintainer scripts: ibatd.service enabled and started on install, restarted on upgrade (the
# start action of dh_installsystemd's postinst is "restart" on upgrade); the timer installed
# without enable or start; /var/lib/ibat removed on purge.
ctl="$work/control-ibat"
grep -q "deb-systemd-helper enable 'ibatd.service'" "$ctl/postinst" || fail "postinst does not enable ibatd.service"
grep -q "deb-systemd-invoke \$_dh_action 'ibatd.service'" "$ctl/postinst" || fail "postinst does not start/restart ibatd.service"
grep -q "_dh_action=restart" "$ctl/postinst" || fail "postinst does not restart ibatd.service on upgrade"
# The timer's enable runs only for a timer the admin enabled before (dh_installsystemd --no-enable
# guards it with `debian-installed` and `was-enabled`); its start is deb-systemd-invoke's, which
# starts no disabled unit (the install test shows that).
grep -q "if deb-systemd-helper debian-installed 'ibat-textfile.timer'" "$ctl/postinst" ||
  fail "postinst does not guard the textfile timer's enable (not installed with --no-enable?)"
! grep -q "deb-systemd-helper enable 'ibat-textfile.timer'" <(awk '/debian-installed .ibat-textfile.timer./{g=1} !g' "$ctl/postinst") ||
  fail "postinst enables the textfile timer unguarded"
grep -q "deb-systemd-invoke stop 'ibat-textfile.timer'" "$ctl/prerm" || fail "prerm does not stop the textfile timer"
grep -q "deb-systemd-invoke stop 'ibatd.service'" "$ctl/prerm" || fail "prerm does not stop ibatd.service"
awk '/"\$1" = "purge"/,/^fi/' "$ctl/postrm" | grep 'rm -rf /var/lib/ibat$' >/dev/null || fail "postrm does not remove /var/lib/ibat on purge"

# libibat1: its symbols file lists exactly what the library exports, and ibat's Depends names it.
exports=$(nm -D --defined-only "$root/$libdir/libibat.so.1" | awk '$2 == "T" || $2 == "D" || $2 == "B" || $2 == "R" {print $3}' |
  grep -v '^IBAT_1$' | sed 's/@@\?/@/' | sort)
symbols=$(sed -n 's/^ \([^ ]*\) .*/\1/p' "$work/control-libibat1/symbols" | grep -v '^IBAT_1@IBAT_1$' | sort)
[[ -n $exports && $exports == "$symbols" ]] || { fail "libibat1's symbols file differs from the library's exports:";
  diff <(echo "$exports") <(echo "$symbols") >&2 || true; }
grep -q '^libibat.so.1 libibat1 #MINVER#' "$work/control-libibat1/symbols" || fail "libibat1's symbols file does not start with libibat.so.1 libibat1"
grep -q '^libibat 1 libibat1' "$work/control-libibat1/shlibs" || fail "libibat1 has no shlibs entry"
depends=$(dpkg-deb -f "$(deb ibat)" Depends)
[[ $depends == *"libibat1 (>= "* ]] || fail "ibat's Depends ($depends) does not name libibat1"
[[ $(dpkg-deb -f "$(deb libibat-dev)" Depends) == *"libibat1 (= $version)"* ]] || fail "libibat-dev does not depend on libibat1 (= $version)"

# ibat.pc locates its prefix from its own place: in the extracted tree it names that tree's folders.
pc() { PKG_CONFIG_PATH="$root/$libdir/pkgconfig" PKG_CONFIG_LIBDIR= pkg-config "$@" ibat; }
[[ $(realpath -m "$(pc --variable=includedir)") == "$root/usr/include" ]] ||
  fail "ibat.pc's includedir is $(pc --variable=includedir), not /usr/include of the package"
[[ $(realpath -m "$(pc --variable=libdir)") == "$root/$libdir" ]] ||
  fail "ibat.pc's libdir is $(pc --variable=libdir), not /$libdir of the package"
[[ $(pc --libs) == *"-libat"* ]] || fail "pkg-config --libs ibat gives '$(pc --libs)'"

# lintian on the .changes (every .deb of the build): no error, no warning.
changes=$(ls "$pkgs"/deb/ibat_"${version}"_*.changes)
if ! lintian --fail-on error,warning --info --display-info --show-overrides "$changes"; then
  fail "lintian reports errors or warnings"
fi

((failures == 0)) || { echo "$failures check(s) failed" >&2; exit 1; }
echo "package OK"
