#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# Installs, upgrades, removes and purges the .debs with this machine's own dpkg, maintainer
# scripts and deb-systemd-helper, in a copy-on-write view of the machine: a private mount
# namespace (unshare -m) with an overlay over / whose upper layer is a temporary folder, chrooted
# into. Every write (the dpkg database, /etc, /var, /usr) lands in that folder and is gone when the
# test ends, passed or failed: the machine itself is left as it was, and other users of it see
# nothing. A fresh tmpfs on /run stands for a host whose PID 1 is not systemd, as here (CI,
# containers): no /run/systemd/system, so deb-systemd-invoke starts and stops nothing and
# `systemctl daemon-reload` is skipped; enablement is still recorded (deb-systemd-helper: the
# symlinks in /etc/systemd/system and its state in /var/lib/systemd/deb-systemd-helper-enabled),
# which is what a booted systemd acts on.
# Steps and checks (tests/package/build_packages.sh built PKG_DIR/old and PKG_DIR/deb):
#   1. install the older build: ibatd.service enabled, the textfile timer not; no ibatd runs; the
#      conffiles registered; libibat.so.1 in ldconfig's cache; ibat runs.
#   2. a local edit of /etc/ibat/ibatd.toml and a warm cache in /var/lib/ibat (ibatd's
#      StateDirectory=, made by systemd when it starts ibatd; made by hand here).
#   3. upgrade to this tree's build: the new version, the edit kept without a .dpkg-* copy, the
#      warm cache kept, ibatd.service still enabled, the timer still not.
#   4. an admin's `systemctl disable ibatd` survives a reinstall.
#   5. remove: the programs and units gone, the conffiles and the warm cache kept, the enablement
#      kept (deb-systemd-helper drops it on purge), the unit not masked.
#   6. purge: nothing of ibat left in /etc, /var/lib/ibat gone, no enablement state, and no file
#      with "ibat" in its path left in the overlay's upper layer.
# The root is prepared as a host that never ran ibat: what an earlier ibatd or a test left on the
# machine outside any package (the warm cache folder /var/lib/ibat of an ibatd run with the default
# config, an /etc/ibat made by hand) is removed in the overlay only, before step 1, so the checks
# judge what the packages write and remove, whatever the machine holds.
#   usage: install_test.sh SOURCE_DIR PKG_DIR
# Exit 77 (skipped) when not root or when the mount namespace or the overlay is not permitted.
set -euo pipefail
src=${1:?usage: install_test.sh SOURCE_DIR PKG_DIR}
pkgs=$(realpath "${2:?usage: install_test.sh SOURCE_DIR PKG_DIR}")

if [[ $(id -u) -ne 0 ]]; then echo "SKIP: needs root (unshare, mount, chroot)"; exit 77; fi
if [[ -z ${IBAT_INSTALL_TEST_NS:-} ]]; then
  # Everything below runs in a private mount namespace; its mounts die with it.
  unshare --mount true 2>/dev/null || { echo "SKIP: unshare --mount is not permitted here"; exit 77; }
  exec env IBAT_INSTALL_TEST_NS=1 unshare --mount --propagation private "$0" "$@"
fi

work=$(realpath "$(mktemp -d)")
upper="$work/upper" root="$work/root"
trap 'umount -R "$root" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$upper" "$work/ovl-work" "$root"
if ! mount -t overlay overlay -o "lowerdir=/,upperdir=$upper,workdir=$work/ovl-work" "$root"; then
  echo "SKIP: cannot mount an overlay over / here (a container without CAP_SYS_ADMIN?)"; exit 77
fi
mount --rbind /proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/run"
mkdir -p "$root/run/lock"

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
dpkg_in_root() { echo "+ dpkg $*"; in_root dpkg "$@" 2>&1 | sed 's/^/  /'; return "${PIPESTATUS[0]}"; }

version=$(cd "$src" && dpkg-parsechangelog -S Version)
old_version="$version~old1"
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
new_debs=("$pkgs/deb/ibat_${version}_$arch.deb" "$pkgs/deb/libibat1_${version}_$arch.deb")
old_debs=("$pkgs/old/ibat_${old_version}_$arch.deb" "$pkgs/old/libibat1_${old_version}_$arch.deb")
for d in "${new_debs[@]}" "${old_debs[@]}"; do [[ -f $d ]] || { echo "FAIL: $d was not built" >&2; exit 1; }; done
# The packages, seen from inside the root (the overlay shows / as it is).
if in_root dpkg-query -W ibat >/dev/null 2>&1; then echo "FAIL: ibat is installed on this machine already" >&2; exit 1; fi
[[ ! -d /run/systemd/system ]] || echo "note: systemd runs on this machine; the root's /run hides it"
# No package owns them (checked just above): removed in the root only (whiteouts in the upper layer).
prepared=()
for p in /var/lib/ibat /etc/ibat; do
  if [[ -e $root$p || -L $root$p ]]; then
    echo "note: $p exists on this machine (no package owns it); the test's root starts without it"
    rm -rf "${root:?}$p"
    prepared+=(".$p")
  fi
done

wants=/etc/systemd/system/multi-user.target.wants/ibatd.service
timer_wants=/etc/systemd/system/timers.target.wants/ibat-textfile.timer
dsh=/var/lib/systemd/deb-systemd-helper-enabled
status() {
  local s
  s=$(in_root dpkg-query -W -f='${Status} ${Version}' "$1" 2>/dev/null) || s=not-installed
  [[ $s == *" not-installed"* ]] && s=not-installed
  echo "$s"
}
exists() { [[ -e $root$1 || -L $root$1 ]]; }
# A process running ibatd from this root (the only way one could have been started here).
ibatd_running() {
  local p
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/root" 2>/dev/null) == "$root" && $(readlink "$p/exe" 2>/dev/null) == */ibatd* ]] && return 0
  done
  return 1
}
enabled_checks() {  # STEP
  [[ $(readlink "$root$wants") == /lib/systemd/system/ibatd.service ]] || fail "$1: $wants is not the link to the unit"
  exists "$dsh/ibatd.service.dsh-also" || fail "$1: deb-systemd-helper has no state for ibatd.service"
  grep -qx "$wants" "$root$dsh/ibatd.service.dsh-also" 2>/dev/null || fail "$1: deb-systemd-helper's state lacks $wants"
  ! exists "$timer_wants" || fail "$1: ibat-textfile.timer is enabled"
  ! exists "$dsh/timers.target.wants/ibat-textfile.timer" || fail "$1: deb-systemd-helper recorded the timer as enabled"
  ! ibatd_running || fail "$1: an ibatd runs (deb-systemd-invoke started it without systemd?)"
  ! exists /run/ibat || fail "$1: /run/ibat exists"
}

echo "== 1. install $old_version"
dpkg_in_root -i "${old_debs[@]}" || fail "dpkg -i of $old_version failed"
[[ $(status ibat) == "install ok installed $old_version" ]] || fail "1: ibat is '$(status ibat)'"
[[ $(status libibat1) == "install ok installed $old_version" ]] || fail "1: libibat1 is '$(status libibat1)'"
enabled_checks 1
conffiles=$(in_root dpkg-query -W -f='${Conffiles}' ibat | awk '{print $1}' | sort | tr '\n' ' ')
[[ $conffiles == "/etc/ibat/ibatd.toml /etc/nhc/scripts/ibat.nhc " ]] || fail "1: registered conffiles are '$conffiles'"
in_root ldconfig -p | grep "libibat.so.1 (.*) => .*/lib/$multiarch/libibat.so.1$" >/dev/null || fail "1: libibat.so.1 is not in ldconfig's cache"
in_root ibat --help >/dev/null || fail "1: ibat --help failed in the root"
! exists /var/lib/ibat || fail "1: /var/lib/ibat exists after install (systemd makes it, not the package)"

echo "== 2. a local edit and a warm cache"
echo "# local edit kept across upgrades" >>"$root/etc/ibat/ibatd.toml"
edited_sum=$(md5sum <"$root/etc/ibat/ibatd.toml")
install -d -m 0750 "$root/var/lib/ibat"
echo "warm cache" >"$root/var/lib/ibat/ibatd.cache"

echo "== 3. upgrade to $version"
dpkg_in_root -i "${new_debs[@]}" || fail "dpkg -i of $version over $old_version failed"
[[ $(status ibat) == "install ok installed $version" ]] || fail "3: ibat is '$(status ibat)'"
[[ $(status libibat1) == "install ok installed $version" ]] || fail "3: libibat1 is '$(status libibat1)'"
[[ $(md5sum <"$root/etc/ibat/ibatd.toml") == "$edited_sum" ]] || fail "3: the local edit of ibatd.toml is lost"
leftovers=$(find "$root/etc/ibat" "$root/etc/nhc" -name '*.dpkg-*')
[[ -z $leftovers ]] || fail "3: dpkg left $leftovers"
[[ -f $root/var/lib/ibat/ibatd.cache ]] || fail "3: the upgrade removed /var/lib/ibat/ibatd.cache"
enabled_checks 3

echo "== 4. disabled by the admin, reinstalled"
in_root systemctl disable ibatd.service 2>&1 | sed 's/^/  /'
! exists "$wants" || fail "4: systemctl disable left $wants"
dpkg_in_root -i "${new_debs[@]}" || fail "4: reinstalling $version failed"
! exists "$wants" || fail "4: reinstalling re-enabled ibatd.service against the admin's disable"
in_root systemctl enable ibatd.service 2>&1 | sed 's/^/  /'

echo "== 5. remove"
dpkg_in_root -r ibat libibat1 || fail "dpkg -r failed"
[[ $(status ibat) == "deinstall ok config-files $version" ]] || fail "5: ibat is '$(status ibat)'"
for f in /usr/sbin/ibatd /usr/bin/ibat /lib/systemd/system/ibatd.service /lib/systemd/system/ibat-textfile.timer \
         /usr/lib/ibat/ibat-textfile "/usr/lib/$multiarch/libibat.so.1"; do
  ! exists "$f" || fail "5: $f is still there after remove"
done
[[ $(md5sum <"$root/etc/ibat/ibatd.toml") == "$edited_sum" ]] || fail "5: remove changed the edited conffile"
exists /etc/nhc/scripts/ibat.nhc || fail "5: remove deleted the conffile /etc/nhc/scripts/ibat.nhc"
[[ -f $root/var/lib/ibat/ibatd.cache ]] || fail "5: remove deleted /var/lib/ibat"
[[ $(status libibat1) == not-installed ]] || fail "5: libibat1 is '$(status libibat1)' (it has no conffiles)"
# deb-systemd-helper keeps the enablement (the link, dangling now, and its state) until purge, so
# that a reinstall restores the admin's choice; systemd ignores a link to a missing unit.
[[ -L $root$wants && ! -e $root$wants ]] || fail "5: $wants is not the dangling link remove leaves"
exists "$dsh/ibatd.service.dsh-also" || fail "5: remove dropped deb-systemd-helper's state of ibatd.service"
! exists /etc/systemd/system/ibatd.service || fail "5: remove masked ibatd.service"
! ibatd_running || fail "5: an ibatd runs"

echo "== 6. purge"
dpkg_in_root -P ibat || fail "dpkg -P failed"
[[ $(status ibat) == not-installed ]] || fail "6: ibat is '$(status ibat)'"
for f in /etc/ibat /etc/nhc/scripts/ibat.nhc /var/lib/ibat /etc/systemd/system/ibatd.service "$wants" \
         "$dsh/ibatd.service.dsh-also" "$dsh/multi-user.target.wants/ibatd.service"; do
  ! exists "$f" || fail "6: $f is still there after purge"
done
# A prepared path's whiteout (a 0/0 character device: the machine's folder removed in the root) is
# not a leftover.
left=$(cd "$upper" && find . -path ./tmp -prune -o -path "*ibat*" -print | grep -v '^./work/' |
  while IFS= read -r f; do [[ -c $f && " ${prepared[*]} " == *" $f "* ]] || echo "$f"; done || true)
[[ -z $left ]] || fail "6: purge left these in the root: $left"

((failures == 0)) || { echo "$failures check(s) failed" >&2; exit 1; }
echo "install OK"
