#!/usr/bin/env bash
# Builds the Debian package of ibat (daemon, CLI, libibat with headers and pkg-config file, man
# pages, systemd unit, default config and NHC check as conffiles, the node_exporter textfile timer
# with its script, Prometheus alert rules and a Grafana dashboard) from a CMake build tree
# configured with the install prefix /usr (the release and test presets are): the tree's own
# install rules are staged with `cmake --install --strip`, the Debian control files are generated
# around them, and dpkg-deb builds the .deb. Prints the package's path.
#   usage: scripts/package-deb.sh BUILD_DIR [OUT_DIR]   (OUT_DIR defaults to BUILD_DIR)
set -euo pipefail

build=${1:?usage: package-deb.sh BUILD_DIR [OUT_DIR]}
out=${2:-$build}
cache="$build/CMakeCache.txt"
[[ -f $cache ]] || { echo "package-deb: $build is not a configured CMake build tree (no CMakeCache.txt)" >&2; exit 1; }
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$cache"; }
prefix=$(cache_value CMAKE_INSTALL_PREFIX)
if [[ $prefix != /usr ]]; then
  echo "package-deb: $build installs into '$prefix'; a Debian package needs /usr (configure with -DCMAKE_INSTALL_PREFIX=/usr)" >&2
  exit 1
fi

package=ibat
version=$(cache_value CMAKE_PROJECT_VERSION)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
source_dir=$(cd "$(dirname "$0")/.." && pwd)
maintainer=${IBAT_MAINTAINER:-"ibat maintainers <ibat@example.org>"}
# The changelog's date: the last commit's, so the same tree packs the same bytes.
date=$(git -C "$source_dir" log -1 --format=%aD 2>/dev/null || date -R)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date -d "$date" +%s)}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"
DESTDIR="$root" cmake --install "$build" --strip >/dev/null

libdir="usr/lib/$multiarch"
for f in usr/sbin/ibatd usr/bin/ibat "$libdir/libibat.so.1" usr/include/ibat.h "$libdir/pkgconfig/ibat.pc" \
         lib/systemd/system/ibatd.service etc/ibat/ibatd.toml etc/nhc/scripts/ibat.nhc \
         usr/lib/ibat/ibat-textfile lib/systemd/system/ibat-textfile.service lib/systemd/system/ibat-textfile.timer \
         usr/share/ibat/prometheus/ibat-alerts.yml usr/share/ibat/grafana/ibat-dashboard.json; do
  [[ -e $root/$f ]] || { echo "package-deb: the install rules of $build did not install /$f" >&2; exit 1; }
done

# Debian policy: compressed man pages, a copyright file and a changelog in /usr/share/doc.
find "$root/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9n {} +
doc="$root/usr/share/doc/$package"
install -d -m 0755 "$doc"
install -m 0644 "$source_dir/packaging/copyright" "$doc/copyright"
install -D -m 0644 "$source_dir/packaging/ibat.lintian-overrides" "$root/usr/share/lintian/overrides/$package"
printf '%s (%s) unstable; urgency=medium\n\n  * Package built from the ibat source tree.\n\n -- %s  %s\n' \
  "$package" "$version" "$maintainer" "$date" | gzip -9n >"$doc/changelog.gz"

control="$root/DEBIAN"
install -d -m 0755 "$control"
printf '%s\n' /etc/ibat/ibatd.toml /etc/nhc/scripts/ibat.nhc >"$control/conffiles"
echo "libibat 1 $package (>= $version)" >"$control/shlibs"
echo "activate-noawait ldconfig" >"$control/triggers"

# Depends: what the binaries link, as dpkg-shlibdeps finds it (it wants a debian/control).
mkdir -p "$work/src/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$package" "$package" >"$work/src/debian/control"
depends=$(cd "$work/src" && dpkg-shlibdeps -O -x"$package" -S"$root" -l"$root/$libdir" \
  "$root/usr/sbin/ibatd" "$root/usr/bin/ibat" "$root/$libdir"/libibat.so.1.* |
  sed -n 's/^shlibs:Depends=//p')

cat >"$control/control" <<EOF
Package: $package
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Section: net
Priority: optional
Description: InfiniBand path resolution daemon with a per-host path cache
 ibatd answers "how do I reach that destination?" for every process on a host:
 given a GID, LID, IP address or IPoIB hardware address it returns a real SA
 PathRecord. It caches paths, coalesces concurrent requests into one SA query,
 bounds its SA load and keeps serving through SM restarts and LID changes.
 .
 This package holds the daemon (ibatd), its command-line client (ibat), the
 client library libibat with its headers and pkg-config file, the man pages,
 the systemd unit and the default configuration, an NHC check, a timer that
 writes the statistics for node_exporter's textfile collector, Prometheus
 alert rules and a Grafana dashboard.
EOF
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$control/md5sums"
find "$root" -type d -exec chmod 0755 {} +
chmod 0644 "$control"/*

mkdir -p "$out"
deb="$out/${package}_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
