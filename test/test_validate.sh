#!/bin/sh
# topdown-validate: passes on the emulator, and each check fails when the
# emulator injects the fault it exists to catch (TD_EMU_FAULT, see
# test/emu/emu_preload.c).  Usage: test_validate.sh build/topdown-validate
set -u
v=$1
out=$(mktemp) json=$(mktemp)
trap 'rm -f "$out" "$json"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Without --emulate: on a machine without a PMU, exit 77 and the reason.
"$v" >"$out" 2>&1
rc=$?
if [ "$rc" -eq 77 ]; then
	grep -q "SKIP (exit 77): no hardware PMU" "$out" ||
		fail "exit 77 without td_strerror's reason: $(cat "$out")"
else
	echo "note: a usable PMU here (exit $rc); the skip path is not exercised"
fi

# --emulate passes, labelled, with a JSON report.
"$v" --emulate -o "$json" >"$out" 2>&1 || fail "--emulate exit $?: $(cat "$out")"
grep -q "EMULATED" "$out" || fail "--emulate output not labelled EMULATED"
grep -q "^FAIL" "$out" && fail "--emulate: $(grep '^FAIL' "$out")"
if command -v python3 >/dev/null; then
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
assert d["machine"]["emulated"] and d["failed"] == 0 and d["checks"], d' \
		"$json" || fail "JSON report"
fi

# The memory drill-down's pair of chases runs where the profile has the
# drill-down (spr), through the library's real route, and says that the
# answer it checks is the emulator's own.
grep -q "^PASS memory drill-down .*EMULATED: the emulator's synthetic" \
	"$out" || fail "--emulate: memory drill-down: $(grep 'memory' "$out")"
grep -q "L1 chase (16 KiB): .* largest l1_bound .*DRAM chase .* largest dram_bound" \
	"$out" || fail "--emulate: memory drill-down figures: $(grep 'memory' "$out")"

# An ordinary-counter profile (AMD Zen 4): the cross-check runs there too,
# against the validator's own formulas, not SKIP.
"$v" --emulate=zen4 >"$out" 2>&1 || fail "--emulate=zen4 exit $?: $(cat "$out")"
grep -q "^FAIL" "$out" && fail "--emulate=zen4: $(grep '^FAIL' "$out")"
grep -q "^PASS crosscheck retiring" "$out" ||
	fail "--emulate=zen4: no cross-check: $(grep crosscheck "$out")"
# no drill-down on Zen: skipped, with td_open's reason
grep -q "^SKIP memory drill-down .*skipped: no memory drill-down.*backend_bound_memory" \
	"$out" || fail "--emulate=zen4: memory drill-down not skipped with its reason: $(grep 'memory' "$out")"

# Every trap slowed as a loaded machine slows it (TD_EMU_SLOW_TRAPS): the
# workloads' work is declared to the emulator, the traps' time counts
# nowhere, so every verdict stays the same.
for p in spr zen4; do
	TD_EMU_SLOW_TRAPS=1 "$v" --emulate="$p" >"$out" 2>&1 ||
		fail "--emulate=$p with slow traps: exit $?: $(grep '^FAIL' "$out")"
done

# expect [--profile P] FAULT CHECK...: with TD_EMU_FAULT=FAULT on the
# emulator's profile P (spr unless given), each CHECK fails.
expect() {
	profile=spr
	if [ "$1" = --profile ]; then
		profile=$2
		shift 2
	fi
	fault=$1
	shift
	TD_EMU_FAULT=$fault "$v" --emulate="$profile" >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "$fault ($profile): exit $rc, expected 1"
	for c in "$@"; do
		if grep -q "^SKIP $c" "$out"; then
			echo "note: $c skipped here"
		elif ! grep -q "^FAIL $c" "$out"; then
			fail "$fault did not fail \"$c\""
		fi
	done
}

# a wrong encoding: the breakdown and the cross-check
expect metrics_swap "kernel retiring" "kernel backend_memory" \
	"crosscheck retiring" "crosscheck backend_core"
# a broken count: the cross-check and the whole-thread bound
expect slots_double "crosscheck frontend" "whole thread"
# a missed flag: foreign resets the library cannot see
expect hide_reset "drill foreign read" "drill watchdog PMI"
# wrong counts after a context switch, which no flag can catch
expect switch_scramble "drill sleep" "drill migration"
# ordinary counters, a formula with two terms swapped (the fast path sees
# the frontend event's count as retiring's): the independent formulas
# over read(2) of the same group disagree
expect --profile zen4 fe_ret_swap "crosscheck retiring" "crosscheck frontend"
# the drill-down's stall events of L1 and DRAM swapped: each chase's
# largest node is the other level
expect mem_swap "memory drill-down"

[ "$fails" -eq 0 ] && echo "test_validate: all passed"
exit "$fails"
