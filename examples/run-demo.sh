#!/bin/sh
# Run the demo on the real PMU; when there is none (exit 2, reason
# printed), run the same binary on the test emulator, labelled.
demo=$1
emu=$2
"$demo" && exit 0
rc=$?
[ "$rc" -eq 2 ] || exit "$rc"
echo "--- no usable PMU here: running the same demo on the test emulator"
echo "--- (EMULATED: slots follow this thread's CPU time, the breakdown is"
echo "---  synthetic and says nothing about the code being run)"
TD_EMULATE=spr LD_PRELOAD="$emu" "$demo"
