#!/bin/sh
# SPDX-License-Identifier: MIT
# Labels and settings end to end (make test-cmd): every report made on the
# emulated PMU says so whoever writes it; a bad setting names itself, its
# value and the accepted ones; topdown run's own exit statuses, its
# refusal of static programs, its profiles; the emulator found wherever
# make install put the library.  Usage: test/test_labels.sh BUILD_DIR
set -u
B=${1:-build}
td="$PWD/$B/topdown"
emu="$PWD/$B/libtdemu.so"
threads="$PWD/$B/examples/threads"
harness="$PWD/$B/examples/harness"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
expect() {
	want=$1 name=$2
	shift 2
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$name"; else
		fail "$name: exit $got, want $want"; sed 's/^/    /' "$tmp/out"; fi
}
has() {
	if grep -Eq -- "$2" "$3"; then ok "$1"; else
		fail "$1: no /$2/ in $3"; sed 's/^/    /' "$3" | head -20; fi
}
hasnt() {
	if grep -Eq -- "$2" "$3"; then
		fail "$1: /$2/ in $3"; sed 's/^/    /' "$3" | head -20; else ok "$1"; fi
}
emulated() { TD_EMULATE=spr LD_PRELOAD="$emu" "$@"; }

# ---- the library's own reports on the emulator, no topdown run -----------
TOPDOWN_REPORT="$tmp/d.csv" TOPDOWN_FORMAT=csv emulated "$threads" >/dev/null 2>&1
awk -F, 'NR == 1 { bad = $NF != "pmu"; next }
	 { rows++; if ($NF != "emulated:spr") bad = 1 }
	 END { exit !(bad == 0 && rows > 0) }' "$tmp/d.csv" &&
	ok "TOPDOWN_REPORT csv on the emulator: every row's pmu is emulated:spr" ||
	{ fail "TOPDOWN_REPORT csv on the emulator is not labelled"; head -3 "$tmp/d.csv"; }
TOPDOWN_REPORT="$tmp/d.jsonl" TOPDOWN_FORMAT=jsonl emulated "$threads" >/dev/null 2>&1
if [ -s "$tmp/d.jsonl" ] && ! grep -qv '"pmu":"emulated:spr"}$' "$tmp/d.jsonl"; then
	ok "TOPDOWN_REPORT jsonl on the emulator: every line labelled"; else
	fail "TOPDOWN_REPORT jsonl on the emulator is not labelled"; fi
TOPDOWN_REPORT="$tmp/d.txt" emulated "$threads" >/dev/null 2>&1
has "TOPDOWN_REPORT table on the emulator: first line" "^EMULATED PMU \(profile spr\)" "$tmp/d.txt"
emulated "$harness" csv >"$tmp/h.csv" 2>/dev/null
has "td_report_named by the program itself: labelled" ",emulated:spr$" "$tmp/h.csv"
has "td_report_records by the program itself: labelled" "^record,.*,emulated:spr$" "$tmp/h.csv"
expect 0 "plot of the program's own report" "$td" plot "$tmp/d.jsonl" -o "$tmp/d.svg"
has "the picture says EMULATED" "EMULATED PMU" "$tmp/d.svg"
expect 0 "run --emulate -f csv" "$td" run --emulate -f csv -o "$tmp/r.csv" -- "$threads"
head -1 "$tmp/r.csv" | grep -q ',pmu,pmu' && fail "run: two pmu columns" ||
	ok "run: one pmu column"
"$threads" >/dev/null 2>"$tmp/hw.txt" # no PMU here, or a real one: never emulated
hasnt "without the emulator nothing says emulated" "EMULATED|emulated:" "$tmp/hw.txt"

# ---- settings ----------------------------------------------------------------
(cd "$tmp" && TOPDOWN_REPORT=stdout TOPDOWN_FORMAT=csv emulated "$threads" >"$tmp/so" 2>/dev/null)
has "TOPDOWN_REPORT=stdout: the report on stdout" "^kind,name,thread" "$tmp/so"
[ -e "$tmp/stdout" ] && fail "TOPDOWN_REPORT=stdout made a file named stdout" ||
	ok "TOPDOWN_REPORT=stdout: no file named stdout"
(cd "$tmp" && TOPDOWN_REPORT=- TOPDOWN_FORMAT=csv emulated "$threads" >"$tmp/so" 2>/dev/null)
has "TOPDOWN_REPORT=-: the report on stdout" "^kind,name,thread" "$tmp/so"
[ -e "$tmp/-" ] && fail "TOPDOWN_REPORT=- made a file named -" || ok "TOPDOWN_REPORT=-: no file"
TOPDOWN_RESET=ALWAYS emulated "$harness" table >"$tmp/out" 2>&1
has "TOPDOWN_RESET=ALWAYS: td_open's error quotes it" \
	'TOPDOWN_RESET="ALWAYS" is not one of auto, always, never' "$tmp/out"
TD_EMULATE=sprr LD_PRELOAD="$emu" "$threads" >"$tmp/out" 2>&1
st=$?
[ "$st" -ne 0 ] && ok "TD_EMULATE=sprr fails" || fail "TD_EMULATE=sprr ran (as spr?)"
has "TD_EMULATE=sprr: named with the accepted profiles" \
	'TD_EMULATE="sprr" is not one of spr, icl, zen4' "$tmp/out"

# ---- topdown run: profiles, static programs, its own exit statuses --------
for p in zen4 skl cmt; do
	expect 0 "run --emulate --profile $p" "$td" run --emulate --profile "$p" \
		-f csv -o "$tmp/p.csv" -- "$threads"
	has "run --profile $p: labelled so" ",emulated:$p$" "$tmp/p.csv"
done
printf 'int main(void) { return 0; }\n' >"$tmp/static.c"
if ${CC:-cc} -static -o "$tmp/static" "$tmp/static.c" 2>/dev/null; then
	expect 125 "run --emulate of a static program fails" "$td" run --emulate -- "$tmp/static"
	has "run: says the program is statically linked" "statically linked" "$tmp/out"
	hasnt "run: does not blame linking with libtopdown" "must be linked with libtopdown" "$tmp/out"
else
	echo "SKIPPED: no static libc (apt install libc6-dev)"
fi
expect 124 "run: a bad argument is 124" "$td" run -f xml -- true
expect 124 "run: a bad profile is 124" "$td" run --emulate --profile zen9 -- true
has "run: a bad profile lists the profiles" "'zen9'.*spr, icl, zen4, zen5, skl, hsw, grt, cmt, tnt" "$tmp/out"
expect 2 "run: a program's own 2 is its own" "$td" run -- sh -c 'exit 2'
has "run: man page documents 124" '^124$' libtopdown/man/man1/topdown.1
has "run: README documents 124" '124 a bad argument' README.md

# ---- check: the emulator's word, never a variable's -------------------------
TD_EMULATE=spr "$td" check >"$tmp/out" 2>&1
hasnt "check: TD_EMULATE set, no emulator loaded: not called emulated" "EMULATED PMU|\(EMULATED\)" "$tmp/out"
expect 0 "check --emulate" "$td" check --emulate
has "check --emulate: labelled" "^EMULATED PMU \(profile spr\)" "$tmp/out"

# ---- check without a PMU points at --emulate ------------------------------
pmu=0
for d in /sys/bus/event_source/devices/cpu /sys/bus/event_source/devices/cpu_core \
	 /sys/bus/event_source/devices/armv8_* /sys/bus/event_source/devices/armv9_*; do
	[ -e "$d" ] && pmu=1
done
if [ "$pmu" = 0 ]; then
	expect 1 "check without a PMU" "$td" check
	has "check without a PMU points at --emulate" "topdown check --emulate" "$tmp/out"
fi

# ---- the emulator: one variable, found wherever the library went ----------
TOPDOWN_EMULATOR="$tmp/none.so" "$td" validate --emulate >"$tmp/out" 2>&1
has "validate --emulate names TOPDOWN_EMULATOR" "TOPDOWN_EMULATOR" "$tmp/out"
hasnt "validate --emulate: no TD_EMULATOR, no build-tree advice" "TD_EMULATOR|make build" "$tmp/out"
if make -s install B="$B" DESTDIR="$tmp/dest" PREFIX=/usr LIBDIR=/usr/lib64 \
	>"$tmp/install.log" 2>&1; then
	test -f "$tmp/dest/usr/lib64/topdown/libtopdown-emulated-pmu.so" &&
		ok "installed into lib64" || fail "emulator not in lib64"
	expect 0 "installed (lib64, DESTDIR) topdown run --emulate" \
		"$tmp/dest/usr/bin/topdown" run --emulate -f csv -o "$tmp/i.csv" -- "$threads"
	has "installed run --emulate: labelled" ",emulated:spr$" "$tmp/i.csv"
	expect 0 "installed (lib64, DESTDIR) topdown validate --emulate" \
		"$tmp/dest/usr/bin/topdown" validate --emulate
else
	fail "make install LIBDIR=/usr/lib64"; cat "$tmp/install.log"
fi

echo "test_labels.sh: $failures failed"
[ "$failures" -eq 0 ]
