#!/bin/sh
# SPDX-License-Identifier: MIT
# The topdown command end to end (make test-cmd): check, run and plot on
# the emulated PMU, the picture rendered by rsvg-convert and checked pixel
# by pixel (test/png_check.py), the installed layout, help and bad
# arguments.  Usage: test/test_cmd.sh BUILD_DIR
set -u
B=${1:-build}
td="$B/topdown"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# expect STATUS NAME CMD...: CMD exits STATUS; its output in $tmp/out
expect() {
	want=$1 name=$2
	shift 2
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$name"; else
		fail "$name: exit $got, want $want"; sed 's/^/    /' "$tmp/out"; fi
}
# has NAME PATTERN FILE: FILE matches the extended regex
has() {
	if grep -Eq -- "$2" "$3"; then ok "$1"; else
		fail "$1: no /$2/ in $3"; sed 's/^/    /' "$3" | head -20; fi
}

# ---- check -------------------------------------------------------------
pmu=0
for d in /sys/bus/event_source/devices/cpu /sys/bus/event_source/devices/cpu_core \
	 /sys/bus/event_source/devices/armv8_* /sys/bus/event_source/devices/armv9_*; do
	[ -e "$d" ] && pmu=1
done
if [ "$pmu" = 0 ]; then
	expect 1 "check without a PMU exits 1" "$td" check
	has "check names the missing PMU" "BLOCKER: no hardware PMU" "$tmp/out"
	has "check gives the fix" "fix: .*(bare metal|pmu=on)" "$tmp/out"
	has "check lists perf_event_paranoid" "perf_event_paranoid" "$tmp/out"
else
	"$td" check >"$tmp/out" 2>&1
	has "check answers (a PMU is here)" "^topdown check: (YES|NO)" "$tmp/out"
fi
# ---- validate ------------------------------------------------------------
if [ "$pmu" = 0 ]; then
	expect 77 "validate without a PMU exits 77 (skipped)" "$td" validate
	has "validate gives check's reason and fix" "no hardware PMU.*(bare metal|pmu=on)" "$tmp/out"
fi
expect 0 "validate --emulate passes" "$td" validate --emulate -o "$tmp/v.json"
has "validate --emulate is labelled" "EMULATED" "$tmp/out"
has "validate --emulate: summary" "^[0-9]+ passed, 0 failed" "$tmp/out"
has "validate --emulate: a JSON report" '"checks"|"machine"' "$tmp/v.json"
expect 0 "validate --emulate --profile zen4 passes" "$td" validate --emulate --profile zen4
has "validate on ordinary counters cross-checks" "^PASS crosscheck retiring" "$tmp/out"
expect 0 "check --emulate exits 0" "$td" check --emulate
has "check --emulate is labelled" "^EMULATED PMU" "$tmp/out"
has "check --emulate: level 2, RDPMC" "level 1 and 2.*|RDPMC" "$tmp/out"

# ---- run: the harness, JSON Lines --------------------------------------
expect 0 "run --emulate -f jsonl" "$td" run --emulate -f jsonl \
	-o "$tmp/r.jsonl" -- "$B/examples/harness" table
has "run: totals of every kernel" '"name":"walk_dram","thread":"all","calls":4,' "$tmp/r.jsonl"
if grep -v '"pmu":"emulated:spr"}$' "$tmp/r.jsonl" | grep -q .; then
	fail "run: a JSON line without the pmu column"; else ok "run: every line says emulated"; fi

# ---- run: a 4-thread program, CSV --------------------------------------
expect 0 "run --emulate -f csv of 4 threads" "$td" run --emulate -f csv \
	-o "$tmp/t.csv" -- "$B/examples/threads"
# one header first, every row as many fields (no field here has a comma)
awk -F, 'NR == 1 { n = NF; if ($1 != "kind" || $3 != "thread" || $NF != "pmu") bad = 1; next }
	 /^kind,/ { bad = 1 } NF != n { bad = 1 }
	 $2 == "sum" && $3 ~ /^[0-9]+:worker-[0-3]$/ { threads++ }
	 $2 == "sum" && $3 == "all" { all++; calls = $4 }
	 END { exit !(bad == 0 && threads == 4 && all == 1 && calls == 20) }' "$tmp/t.csv" &&
	ok "4 threads: one table, 4 named thread rows and an all row" ||
	{ fail "4 threads: not one table with per-thread and all rows"; cat "$tmp/t.csv"; }
# The same on Zen 4's ordinary counters, every trap slowed as a loaded
# machine slows it (TD_EMU_SLOW_TRAPS: 0-350 us of CPU time before the
# emulator's clock): each region's counters are read as one instant, so
# its err is the rounding of whole cycles (under 6 slots of millions) and
# no region is flagged; counted, the traps' cost made err 0.005 to 0.03.
TD_EMU_SLOW_TRAPS=1 TOPDOWN_REPORT=stderr TOPDOWN_FORMAT=csv TD_EMULATE=zen4 \
	LD_PRELOAD="$B/libtdemu.so" "$B/examples/threads" >/dev/null 2>"$tmp/z.csv"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	 $1 == "region" { rows++; if ($col["unreliable"] != 0 || $col["err"] > 0.001) bad = 1 }
	 END { exit !(bad == 0 && rows == 10) }' "$tmp/z.csv" &&
	ok "4 threads on zen4, slow traps: no region flagged, err under 0.001" ||
	{ fail "4 threads on zen4, slow traps: flagged or err over 0.001"; cat "$tmp/z.csv"; }
expect 0 "run --emulate -f table (default: stderr)" "$td" run --emulate -- "$B/examples/threads"
has "the table is labelled EMULATED" "^EMULATED PMU \(profile spr\)" "$tmp/out"
has "the table has the all rows" "^chase +all " "$tmp/out"
expect 0 "run --memory -f csv" "$td" run --emulate --memory -f csv \
	-o "$tmp/m.csv" -- "$B/examples/threads"
has "run --memory: the drill-down's columns" \
	",open,l1_bound,l2_bound,l3_bound,dram_bound,store_bound," "$tmp/m.csv"
has "run --memory: nodes measured" ",[0-9]+,[0-9]+,0\.[0-9]{6},0\.[0-9]{6},0\.[0-9]{6},0\.[0-9]{6},0\.[0-9]{6}," "$tmp/m.csv"
has "run --memory: the all-threads rows have the nodes" \
	"^region,[^,]*,all,([^,]*,){29}0\.[0-9]{6}," "$tmp/m.csv"
expect 0 "run --memory -f jsonl" "$td" run --emulate --memory -f jsonl \
	-o "$tmp/m.jsonl" -- "$B/examples/threads"
expect 0 "plot of the memory drill-down" "$td" plot "$tmp/m.jsonl" -o "$tmp/m.svg"
has "plot: memory bound split into its nodes" 'id="r[0-9]+-L1_bound"' "$tmp/m.svg"
TOPDOWN_MEMORY=1 expect 0 "TOPDOWN_MEMORY=1 passes through run" "$td" run \
	--emulate -f csv -o "$tmp/m2.csv" -- "$B/examples/threads"
has "TOPDOWN_MEMORY=1: nodes measured" ",[0-9]+,[0-9]+,0\.[0-9]{6},0\.[0-9]{6},0\.[0-9]{6},0\.[0-9]{6},0\.[0-9]{6}," "$tmp/m2.csv"

# ---- run: a program stopped by a signal keeps its report ---------------
P="$B/test/report_prog"
for s in INT:130 TERM:143; do
	expect "${s#*:}" "run: SIG${s%:*} ends PROG: its status" "$td" run --emulate -f csv \
		-o "$tmp/sig.csv" -- "$P" signal "${s%:*}"
	has "run: SIG${s%:*}: the report says partial, and why" \
		"^# partial: SIG${s%:*} stopped the process" "$tmp/sig.csv"
	has "run: SIG${s%:*}: the calls ended before it" '^region,ended,all,3,' "$tmp/sig.csv"
	has "run: SIG${s%:*}: the region running shows open" '^region,running,all,0,.*,1,1,,,,,,emulated:spr$' "$tmp/sig.csv"
	has "run: SIG${s%:*}: the CSV header after the mark" '^kind,name,thread,.*,pmu$' "$tmp/sig.csv"
	if grep -q "linked" "$tmp/out"; then fail "run: SIG${s%:*}: blames linking"; else
		ok "run: SIG${s%:*}: no word of linking"; fi
	has "run: SIG${s%:*}: says the report is partial" \
		"stopped by signal [0-9]+ .*report in .*sig.csv is partial" "$tmp/out"
done
expect 137 "run: SIGKILL: PROG's status" "$td" run --emulate -- "$P" signal KILL
has "run: SIGKILL: says killed, and why no report" "killed by signal 9.*no program can write one" "$tmp/out"
if grep -q "linked" "$tmp/out"; then fail "run: SIGKILL: blames linking"; else
	ok "run: SIGKILL: no word of linking"; fi
# Ctrl-C: SIGINT to the whole process group, topdown run and PROG (a
# session of their own, SIGINT at its default as in a terminal); then
# kill(1) of topdown run alone, which passes SIGTERM on.
# until_ready FILE: PROG has begun "running" (at most 20 s)
until_ready() {
	n=0
	while [ ! -e "$1" ] && [ "$n" -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
}
# running PID: not ended (an ended child is a zombie until waited for)
running() {
	st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ]
}
for s in INT TERM; do
	rm -f "$tmp/ready"
	setsid env --default-signal=INT "$td" run --emulate -f jsonl -o "$tmp/sig.jsonl" -- \
		"$P" wait "$tmp/ready" >"$tmp/out" 2>&1 &
	pid=$!
	until_ready "$tmp/ready"
	if [ "$s" = INT ]; then kill -INT "-$pid"; want=130; else kill -TERM "$pid"; want=143; fi
	n=0 # a signal not acted on must not hang the test: KILLed after 20 s
	while running "$pid" && [ "$n" -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
	kill -KILL "-$pid" 2>/dev/null
	wait "$pid"
	got=$?
	[ "$got" -eq "$want" ] && ok "run: SIG$s from outside: PROG's status $want" ||
		{ fail "run: SIG$s from outside: exit $got, want $want"; cat "$tmp/out"; }
	has "run: SIG$s from outside: partial, and why" \
		"^\\{\"kind\":\"partial\",\"reason\":\"SIG$s\",\"pmu\":\"emulated:spr\"\\}$" "$tmp/sig.jsonl"
	has "run: SIG$s from outside: the calls ended" '"name":"ended","thread":"all","calls":3,' "$tmp/sig.jsonl"
done
# ---- run: the table compact above a few regions, full on request --------
expect 0 "run: 6 regions, the table" "$td" run --emulate -- "$P" named 6
[ "$(grep -c '^region_0[0-5] ' "$tmp/out")" = 6 ] && ! grep -q '^  retiring' "$tmp/out" &&
	ok "run: 6 regions: one line each (compact)" ||
	{ fail "run: 6 regions: not one line each"; cat "$tmp/out"; }
has "run: compact: says how to get the full view" "topdown run -f full" "$tmp/out"
expect 0 "run -f full: 6 regions" "$td" run --emulate -f full -- "$P" named 6
[ "$(grep -c '^  retiring ' "$tmp/out")" = 6 ] && [ "$(grep -c '^region_0' "$tmp/out")" = 6 ] &&
	ok "run -f full: every share, one thread row per region (no all row)" ||
	{ fail "run -f full: not the full view"; cat "$tmp/out"; }
expect 0 "run -f compact: 4 threads" "$td" run --emulate -f compact -- "$B/examples/threads"
has "run -f compact: the all row of 4 threads" '^chase +all \(4\) +20 ' "$tmp/out"

# ---- run: per-iteration records in the same report, and their strip ----
expect 0 "run -f csv: records" "$td" run --emulate -f csv -o "$tmp/rec.csv" -- "$P" records 6
awk -F, '/^kind,/ { headers++ } $1 == "region" && $3 != "all" { thread = $3; calls = $4 }
	 $1 == "record" { n++; if ($2 != "iter" || $3 != thread || $4 != 1) bad = 1 }
	 END { exit !(headers == 1 && n == 6 && calls == 6 && bad == 0) }' "$tmp/rec.csv" &&
	ok "run: records in the report: one header, 6 rows of kind record, the region's thread" ||
	{ fail "run: records not in the report as rows of their own kind"; cat "$tmp/rec.csv"; }
expect 0 "run -f full: records" "$td" run --emulate -f full -- "$P" records 6
has "run -f full: the records' table" "^per-iteration records" "$tmp/out"
[ "$(grep -c '^ *[0-5] iter ' "$tmp/out")" = 6 ] && ok "run -f full: a line per record" ||
	{ fail "run -f full: not a line per record"; cat "$tmp/out"; }
expect 0 "run -f compact: records" "$td" run --emulate -f compact -- "$P" records 6
[ "$(grep -c '^iter ' "$tmp/out")" = 1 ] && ok "run -f compact: the region's records in its one line" ||
	{ fail "run -f compact: not one line for iter"; cat "$tmp/out"; }
has "run -f compact: says where the records are" "each of the records" "$tmp/out"
expect 0 "run -f compact: records of an unnamed region" "$td" run --emulate -f compact -- "$P" unnamed-records 5
has "run -f compact: unnamed records as one line" "^- +[0-9]+ +5 +[0-9]+ .*  records" "$tmp/out"
expect 0 "run -f jsonl: records" "$td" run --emulate -f jsonl -o "$tmp/rec.jsonl" -- "$P" records 6
expect 0 "plot of records" "$td" plot "$tmp/rec.jsonl" -o "$tmp/rec.svg"
# each iteration's column as wide as its share of the slots (520 px: the
# bars' 100%), to the SVG's 2 decimals; err drawn as whiskers
sed -n 's/.*"kind":"record".*"slots":\([0-9]*\),"err":\([0-9.]*\),.*/slots \1 \2/p' "$tmp/rec.jsonl" >"$tmp/rec.txt"
sed -n 's/.*<rect id="i0-\([0-9]*\)-retiring" x="[0-9.]*" y="[0-9.]*" width="\([0-9.]*\)".*/width \1 \2/p;
	s/.*<rect id="i0-\([0-9]*\)-err1" x="[0-9.]*" y="[0-9.]*" width="[0-9.]*" height="\([0-9.]*\)".*/err \1 \2/p' \
	"$tmp/rec.svg" >>"$tmp/rec.txt"
awk 'BEGIN { n = 0 } $1 == "slots" { s[n] = $2; e[n++] = $3; total += $2 } $1 == "width" { w[$2] = $3 } $1 == "err" { h[$2] = $3 }
     END { for (k = 0; k < n; k++) { d = w[k] - 520 * s[k] / total; if (d < 0) d = -d; if (d > 0.006) bad = 1
				       d = h[k] - 2 * e[k] * 60; if (d < 0) d = -d; if (d > 0.006) bad = 1 }
	   exit !(n == 6 && bad == 0) }' "$tmp/rec.txt" &&
	ok "plot: iteration widths proportional to slots, err whiskers 2 err high" ||
	{ fail "plot: iteration widths not by slots, or err not drawn"; cat "$tmp/rec.txt"; }

# ---- run: unnamed regions only: say what to do -------------------------
for f in table csv jsonl; do
	expect 125 "run -f $f: unnamed regions only is no report" "$td" run --emulate -f "$f" \
		-o "$tmp/unnamed.$f" -- "$P" unnamed
	has "run -f $f: unnamed only: says to name the regions" \
		"measured no named region.*td_named_begin.*td_named_begin_str" "$tmp/out"
	if grep -q "linked" "$tmp/out"; then fail "run -f $f: unnamed only: blames linking"; else
		ok "run -f $f: unnamed only: no word of linking"; fi
done
has "the table says it too" "^no named region was measured" "$tmp/unnamed.table"
expect 0 "plot of a partial report" "$td" plot "$tmp/sig.jsonl" -o "$tmp/sig.svg"

# ---- plot, rendered ----------------------------------------------------
expect 0 "plot r.jsonl -o r.svg" "$td" plot "$tmp/r.jsonl" -o "$tmp/r.svg"
expect 0 "run -f jsonl of 4 threads" "$td" run --emulate -f jsonl -o "$tmp/t.jsonl" -- "$B/examples/threads"
expect 0 "plot t.jsonl -o t.svg" "$td" plot "$tmp/t.jsonl" -o "$tmp/t.svg"
expect 0 "run -f svg of 4 threads" "$td" run --emulate -f svg -o "$tmp/s.svg" -- "$B/examples/threads"
has "run -f svg: labelled and drawn" 'id="r0-retiring".*|EMULATED PMU' "$tmp/s.svg"
has "run -f svg: the threads drawn" '>thread [0-9]+:worker-3<' "$tmp/s.svg"
if command -v rsvg-convert >/dev/null && command -v python3 >/dev/null; then
	for p in r t; do
		if rsvg-convert "$tmp/$p.svg" -o "$tmp/$p.png" &&
		   python3 test/png_check.py "$tmp/$p.png" "$tmp/$p.svg" "$tmp/$p.jsonl"; then
			ok "$p.svg renders, bars in place and in their colours"
		else
			fail "$p.svg rendering"
		fi
	done
	rsvg-convert "$tmp/s.svg" -o "$tmp/s.png" && ok "run -f svg renders" ||
		fail "run -f svg does not render"
elif [ "${CI:-}" = true ]; then
	fail "rsvg-convert or python3 missing (apt install librsvg2-bin python3)"
else
	echo "SKIPPED: rendering the SVG: rsvg-convert or python3 missing (apt install librsvg2-bin)"
fi

# ---- bad report settings do not stop measurement ------------------------
TOPDOWN_REPORT=stderr TOPDOWN_FORMAT=json TD_EMULATE=spr LD_PRELOAD="$B/libtdemu.so" \
	"$B/examples/harness" table >/dev/null 2>"$tmp/out" && ok "TOPDOWN_FORMAT=json: td_open works" ||
	fail "TOPDOWN_FORMAT=json stopped the harness"
has "TOPDOWN_FORMAT=json: the report says so" 'TOPDOWN_FORMAT="json" is not one of table, csv, jsonl' "$tmp/out"

# ---- help and bad arguments --------------------------------------------
for c in "" check run plot; do
	expect 0 "topdown $c --help" "$td" $c --help
	has "topdown $c --help: usage" "^usage: topdown ${c:-COMMAND}" "$tmp/out"
done
expect 2 "no command" "$td"
expect 2 "unknown command" "$td" frob
has "unknown command named" "'frob'" "$tmp/out"
expect 124 "run: bad format" "$td" run -f xml -- true
has "run: bad format named" "'xml'" "$tmp/out"
expect 124 "run: bad profile" "$td" run --emulate --profile zen9 -- true
has "run: bad profile named" "'zen9'" "$tmp/out"
expect 124 "run: unknown option" "$td" run --frob -- true
has "run: unknown option named" "'--frob'" "$tmp/out"
expect 124 "run: no program" "$td" run -f csv --
expect 124 "run: svg needs -o" "$td" run -f svg -- true
expect 127 "run: program not found" "$td" run -- "$tmp/no-such-program"
expect 125 "run: a program without libtopdown" "$td" run --emulate -- true
has "run: says no report" "wrote no report" "$tmp/out"
expect 2 "plot: no -o" "$td" plot "$tmp/r.jsonl"
expect 2 "plot: missing report" "$td" plot "$tmp/nothing.jsonl" -o "$tmp/x.svg"
has "plot: missing report named" "nothing.jsonl" "$tmp/out"
printf 'kind,name\nregion,a\nthis is not a report\n' >"$tmp/bad.csv"
expect 2 "plot: a bad line" "$td" plot "$tmp/bad.csv" -o "$tmp/x.svg"
has "plot: the bad line named" "bad.csv:3: not a row" "$tmp/out"
expect 2 "check: unknown argument" "$td" check --frob
has "check: unknown argument named" "'--frob'" "$tmp/out"

# ---- installed: the emulator found from the prefix ---------------------
if make -s install B="$B" PREFIX="$tmp/prefix" >"$tmp/install.log" 2>&1; then
	expect 0 "installed topdown run --emulate" "$tmp/prefix/bin/topdown" run --emulate \
		-f csv -o "$tmp/i.csv" -- "$B/examples/threads"
	test -f "$tmp/prefix/lib/topdown/libtopdown-emulated-pmu.so" &&
		ok "emulator installed as lib/topdown/libtopdown-emulated-pmu.so" ||
		fail "emulator not installed"
	nwarn=0
	for page in "$tmp/prefix/share/man"/man*/*; do
		w=$(man --warnings -l "$page" 2>&1 >/dev/null)
		[ -z "$w" ] || { nwarn=$((nwarn + 1)); echo "    $page: $w"; }
	done
	[ "$nwarn" = 0 ] && ok "man -l renders every installed page without a warning" ||
		fail "man -l: $nwarn installed pages warn"
else
	fail "make install"; cat "$tmp/install.log"
fi

echo "test_cmd.sh: $failures failed"
[ "$failures" -eq 0 ]
