#!/bin/sh
# SPDX-License-Identifier: MIT
# topdown run --functions and the flame graph, end to end on the emulator
# (make test-cmd): examples/functions, built with -finstrument-functions
# and not linked with libtopdown, gets its per-function report and its
# TopDown flame graph, rendered by rsvg-convert and checked pixel by pixel.
# The example declares each function's mix to the emulator: chase is
# memory bound, classify mispredicts, dot retires.
set -u
B=${1:-build}
td="$B/topdown"
prog="$B/examples/functions"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }

"$td" run --emulate --functions -f jsonl -o "$tmp/fn.jsonl" -- "$prog" \
	>/dev/null 2>"$tmp/err" && ok "run --functions -f jsonl" ||
	{ fail "run --functions -f jsonl"; cat "$tmp/err"; }
for f in main setup dot classify chase; do
	grep -q "^{\"kind\":\"function\",\"name\":\"$f\",\"thread\":\"all\"," \
		"$tmp/fn.jsonl" && ok "a row for $f (static: .symtab)" ||
		fail "no all-threads row for $f"
done
grep -q '^{"kind":"path","name":"main;chase",' "$tmp/fn.jsonl" &&
	ok "the path main;chase" || fail "no path main;chase"
grep -q '"pmu":"emulated:spr"}$' "$tmp/fn.jsonl" && ok "rows labelled emulated" ||
	fail "rows not labelled emulated"

# CSV: the function rows' header row gets the pmu column too
"$td" run --emulate --functions -f csv -o "$tmp/fn.csv" -- "$prog" >/dev/null 2>&1
grep -q '^kind,name,thread,.*,self_slots,.*,pmu$' "$tmp/fn.csv" &&
	ok "CSV header with self_ columns and pmu" || fail "CSV header"
# the library's (empty) region report follows: its header too
[ "$(grep -c '^kind,' "$tmp/fn.csv")" = "$(grep -c '^kind,.*,pmu$' "$tmp/fn.csv")" ] &&
	ok "every CSV header row with pmu" || fail "a CSV header row without pmu"
grep -q '^function,chase,all,' "$tmp/fn.csv" && ok "CSV row of chase" ||
	fail "no CSV row of chase"

# without the hooks preloaded: glibc's empty ones, no report
"$td" run --emulate -- "$prog" >/dev/null 2>&1
[ $? -eq 125 ] && ok "no --functions: no report (125)" ||
	fail "no --functions: a report, or another status"

"$td" plot "$tmp/fn.jsonl" -o "$tmp/fn.svg" -t "examples/functions" &&
	ok "plot of a per-function report" || fail "plot of a per-function report"
grep -q '<title>main;classify' "$tmp/fn.svg" && ok "flame graph tooltips" ||
	fail "no flame graph tooltip for main;classify"
if command -v rsvg-convert >/dev/null && command -v python3 >/dev/null; then
	if rsvg-convert "$tmp/fn.svg" -o "$tmp/fn.png" &&
	   python3 test/flame_check.py "$tmp/fn.png" "$tmp/fn.svg" \
		"$tmp/fn.jsonl" chase=backend_bound classify=bad_speculation \
		dot=retiring; then
		ok "flame graph renders; frames and colours say what the report says"
	else
		fail "flame graph rendering"
	fi
elif [ "${CI:-}" = true ]; then
	fail "rsvg-convert or python3 missing (apt install librsvg2-bin python3)"
else
	echo "SKIPPED: rendering the flame graph: rsvg-convert or python3 missing"
fi
echo "test_functions_cmd.sh: $fails failed"
[ "$fails" -eq 0 ]
