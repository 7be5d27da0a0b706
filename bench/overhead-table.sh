#!/bin/sh
# The README's overhead table (markdown) from the machine-readable lines
#   overhead,<profile>,<sequence>,<instructions>,<window>,<syscalls>,<reads>
# that build/bench/overhead and make bench-arm64 print (other lines are
# ignored).  usage: make bench-table, or
#   ... | sh bench/overhead-table.sh [--update README.md]
# With --update, the table between the README's overhead-table markers is
# replaced and nothing is printed.
set -eu
table=$(awk -F, '
BEGIN {
	print "| profile | sequence | library instructions | window | syscalls | counter reads | target |"
	print "|---|---|---:|---:|---:|---:|---|"
}
# The targets of bench/overhead_report.c, for the last column.
function target(p, s, i, w, sys, r,   pm, imax, wmax, per, unread) {
	pm = p == "spr" || p == "lnl" || p == "adl-pcore"
	imax = 0
	wmax = 12
	if (pm) {
		if (s == "pair") imax = 60
		if (s == "pair+result") imax = 200
		if (s == "pair+records") imax = 80
	} else {
		# 20 per counter at each end of each region; an end that
		# read nothing ("-": nothing asked of it) leaves r the begin reads
		per = s == "nested" ? r / 4 : r / 2 # reads of one boundary
		if (w == "-")
			per = s == "nested" ? r / 2 : r
		if (s == "pair" || s == "nested")
			imax = 20 * per * 2 * (s == "nested" ? 2 : 1)
		wmax += per
	}
	unread = w == "-" && !pm
	# named regions and the memory drill-down (its general route):
	# reported, only "no syscall" a target
	if (s == "named" || s == "named-str" || p ~ /-mem$/)
		return sys + 0 != 0 ? "MISSED (syscalls 0)" : "met (s=0)"
	if ((w == "-" && !unread) || (!unread && w + 0 > wmax) ||
	    sys + 0 != 0 || (imax && i + 0 > imax))
		return "MISSED (" (imax ? "<= " imax ", " : "") "window <= " wmax ")"
	return unread ? "met (the end reads nothing)" : "met"
}
$1 == "overhead" && NF == 7 {
	printf "| %s | %s | %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6, $7,
		target($2, $3, $4, $5, $6, $7)
	n++
}
END { if (!n) exit 1 }')
if [ "${1:-}" = --update ]; then
	readme=$2
	tmp=$readme.tmp.$$
	TABLE=$table awk '
		/<!-- overhead-table begin -->/ { print; print ENVIRON["TABLE"]; skip = 1; next }
		/<!-- overhead-table end -->/ { skip = 0; found = 1 }
		!skip { print }
		END { if (!found) exit 1 }' "$readme" >"$tmp"
	mv "$tmp" "$readme"
else
	printf '%s\n' "$table"
fi
