#!/bin/sh
# Run an example (the demo, the harness, ...) on the real PMU; when there
# is none (exit 2, reason printed), run the same binary on the test
# emulator, labelled.  Usage: run-demo.sh PROGRAM EMULATOR [ARGS...]
prog=$1
emu=$2
shift 2
"$prog" "$@" && exit 0
rc=$?
[ "$rc" -eq 2 ] || exit "$rc"
name=$(basename "$prog")
echo "--- no usable PMU here: running the same $name on the test emulator"
echo "--- (EMULATED: slots follow this thread's CPU time, the breakdown is"
echo "---  synthetic and says nothing about the code being run)"
TD_EMULATE=spr LD_PRELOAD="$emu" "$prog" "$@"
