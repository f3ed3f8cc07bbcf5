#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# check-layers.sh [ROOT]: the rules of docs/design.md's layer table that linking alone does not
# hold, read in the sources of ROOT (default: this repository): ibat-sim (sim/) reaches nothing of
# src/ but core/ and the fabric's I/O-free layer, so that it runs the code ibatd runs and nothing of
# its I/O; that layer (the src/fabric files sim/ reaches, with their .cpp, and the fabric's
# ibat_fabric_rules library, with its headers) and core/ include no
# I/O or thread header (asio, libibumad, libibverbs, sockets, polling, threads). What sim/ reaches is
# what the compiler's preprocessor says (`$CXX -M -MG`, default c++). Lists each offence as
# file:line (or file: the header reached); exit 1 if any, 0 if none, 2 if ROOT has no sim/ and src/.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cxx=${CXX:-c++}
cd "$root" 2>/dev/null && [[ -d sim && -d src/core && -d src/fabric ]] ||
  { echo "check-layers: $root has no sim/, src/core and src/fabric" >&2; exit 2; }

# The src/ headers a file reaches, one per line (a header -MG finds nowhere is named as included).
reaches() {
  "$cxx" -std=c++20 -Isrc -I. -M -MG "$1" | tr ' \\' '\n\n' | grep -vE '(^$|:$|^/|^sim/)' |
    sed -E 's#^(src/)?#src/#' | sort -u || true
}

offences=0
layer=()
for f in sim/*.h sim/*.cpp; do
  while read -r dep; do
    [[ -z $dep ]] && continue
    case $dep in
      src/core/*) ;;
      src/fabric/*) layer+=("$dep") ;;
      *) echo "$f: reaches $dep (sim/ may reach src/core and the fabric's I/O-free layer only)" >&2; offences=$((offences + 1)) ;;
    esac
  done < <(reaches "$f")
done
# The fabric's I/O-free library (ibat_fabric_rules in src/fabric/CMakeLists.txt) is in the layer
# too, what sim/ reaches of it or not (MadRequests: ibatd's alone, as the simulator has no TIDs).
while read -r src; do
  layer+=("src/fabric/$src")
  [[ -f src/fabric/${src%.cpp}.h ]] && layer+=("src/fabric/${src%.cpp}.h")
done < <(sed -n '/add_library(ibat_fabric_rules/,/)/p' src/fabric/CMakeLists.txt | grep -oE '[A-Za-z0-9_]+\.cpp')
mapfile -t layer < <(printf '%s\n' "${layer[@]}" | sort -u)
files=("${layer[@]}")
for h in "${layer[@]}"; do [[ $h == *.h && -f ${h%.h}.cpp ]] && files+=("${h%.h}.cpp"); done
mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u)
files+=(src/core/*.h src/core/*.cpp)

# I/O and thread headers, by the name inside the #include.
forbidden='^(asio|asio/.*|infiniband/.*|.*umad.*|.*verbs.*|sys/socket\.h|netinet/.*|sys/un\.h|poll\.h|sys/epoll\.h|sys/select\.h|pthread\.h|thread|mutex|shared_mutex|condition_variable|future|stop_token|semaphore|latch|barrier)$'
for f in "${files[@]}"; do
  while IFS=: read -r line text; do
    name=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]*)[>"].*/\1/' <<<"$text")
    if [[ $name =~ $forbidden ]]; then
      echo "$f:$line: $text (an I/O or thread header in the I/O-free layer)" >&2
      offences=$((offences + 1))
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include' "$f" || true)
done
((offences == 0)) || { echo "check-layers: $offences offence(s) above (docs/design.md, \"Layers\")" >&2; exit 1; }
echo "check-layers: sim/ reaches core/ and the fabric's I/O-free layer (${#layer[@]} files, ibat_fabric_rules included); none of them nor core/ includes an I/O or thread header"
