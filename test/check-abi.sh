#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The ABI policy of README.md "ABI", checked on the built library: before
# 1.0 the soname is libtopdown.so.MAJOR.MINOR and the version script has
# one node, TOPDOWN_MAJOR.MINOR, both from the header's TD_VERSION_*; the
# node lists exactly the header's TD_API functions; the shared library
# exports exactly those, each at that version (from 1.0 on the soname is
# libtopdown.so.MAJOR and nodes accumulate: this check must change then).
# Usage: check-abi.sh HEADER MAP SHARED_LIB
set -u
header=$1 map=$2 lib=$3
fail=0
problem() { echo "check-abi: $*" >&2; fail=1; }
command -v readelf >/dev/null || { echo "check-abi: readelf missing (apt install binutils)" >&2; exit 1; }

major=$(sed -n 's/^#define TD_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
minor=$(sed -n 's/^#define TD_VERSION_MINOR \([0-9]*\)$/\1/p' "$header")
[ "$major" = 0 ] || problem "TD_VERSION_MAJOR is $major: write the 1.0 policy first"
node=TOPDOWN_$major.$minor
soname=libtopdown.so.$major.$minor

nodes=$(sed -e 's|/\*.*\*/||' -e '/^[ /]\*/d' "$map" | sed -n 's/^\([A-Za-z_0-9.]*\) *{.*/\1/p')
[ "$nodes" = "$node" ] || problem "$map: version nodes '$(echo $nodes)', want exactly $node"

api=$(sed -n 's/^TD_API .*[ *]\([a-z_0-9]*\)(.*/\1/p' "$header" | sort)
listed=$(sed -n 's/^[[:space:]]*\(td_[a-z_0-9]*\);$/\1/p' "$map" | sort)
[ -n "$api" ] || problem "no TD_API function found in $header"
if [ "$api" != "$listed" ]; then
	problem "$map: not the TD_API functions of $header (+ extra, - missing):"
	echo "$listed" | grep -vxF "$api" | sed 's/^/  + /' >&2
	echo "$api" | grep -vxF "$listed" | sed 's/^/  - /' >&2
fi

got=$(readelf -dW "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
[ "$got" = "$soname" ] || problem "$lib: soname '$got', want $soname"

# Defined dynamic symbols other than the version node's own name.
exported=$(readelf --dyn-syms -W "$lib" |
	awk 'NR > 3 && $7 != "UND" && $5 != "LOCAL" && $8 != "" { print $8 }' |
	grep -vx -e "$node" -e "$node@@$node" | sort)
want=$(for f in $api; do echo "$f@@$node"; done | sort)
if [ "$exported" != "$want" ]; then
	problem "$lib: exports differ from the API at $node (+ extra, - missing):"
	echo "$exported" | grep -vxF "$want" | sed 's/^/  + /' >&2
	echo "$want" | grep -vxF "$exported" | sed 's/^/  - /' >&2
fi

[ "$fail" -eq 0 ] && echo "check-abi: $soname exports the $(echo "$api" | wc -l) TD_API functions at $node"
exit "$fail"
