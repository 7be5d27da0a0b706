#!/bin/sh
# Arm overhead rows: run the guest under qemu-aarch64 twice, first for
# where libtopdown.so's text lies (qemu-user maps the guest at the same
# addresses every run; the second run prints its layout again and the two
# must match), then with every executed guest instruction of that text
# logged (one instruction per translation block, no chaining), and count
# the log with the host's overhead program.
# usage: overhead-arm64.sh GUEST HOST_OVERHEAD PROFILE WORKDIR QEMU [ARGS...]
set -eu
guest=$1 host=$2 prof=$3 dir=$4
shift 4
log=$dir/qemu-$prof.log
out=$dir/guest-$prof.out

layout=$("$@" "$guest" layout)
# layout,LO,HI,BEGIN,END,MARK
lo=$(echo "$layout" | cut -d, -f2)
hi=$(echo "$layout" | cut -d, -f3)
mark=$(echo "$layout" | cut -d, -f6)
size=$(printf '%#x' $((hi - lo)))
# qemu 8.1 renamed -singlestep to -one-insn-per-tb
one=-singlestep
if "$@" -h 2>/dev/null | grep -q -- '-one-insn-per-tb'; then
	one=-one-insn-per-tb
fi
"$@" $one -d in_asm,exec,nochain -dfilter "$lo+$size,$mark+0x4" -D "$log" \
	"$guest" run "$prof" >"$out"
if [ "$(grep '^layout,' "$out")" != "$layout" ]; then
	echo "overhead-arm64: the guest moved between runs" \
	     "($layout, then $(grep '^layout,' "$out")): no rows" >&2
	exit 1
fi
"$host" --qemu-log "$log" "$out" "$prof"
rm -f "$log"

# The function-call row: one instrumented call (libtopdown-functions'
# hooks and the pair they make), both libraries' text counted.
fnlayout=$("$@" "$guest" fnlayout)
fnlo=$(echo "$fnlayout" | cut -d, -f2)
fnhi=$(echo "$fnlayout" | cut -d, -f3)
fnsize=$(printf '%#x' $((fnhi - fnlo)))
"$@" $one -d in_asm,exec,nochain \
	-dfilter "$lo+$size,$fnlo+$fnsize,$mark+0x4" -D "$log" \
	"$guest" run-function "$prof" >"$out"
if [ "$(grep '^layout,' "$out")" != "$layout" ] ||
   [ "$(grep '^fnlayout,' "$out")" != "$fnlayout" ]; then
	echo "overhead-arm64: the guest moved between runs: no" \
	     "function-call row" >&2
	exit 1
fi
"$host" --qemu-function-log "$log" "$out" "$prof"
rm -f "$log"
