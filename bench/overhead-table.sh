#!/bin/sh
# The README's overhead table (markdown) from the machine-readable lines
#   overhead,<profile>,<sequence>,<instructions>,<window>,<syscalls>,<reads>,<verdict>
#   peer,<peer>,<profile>,pair,<instructions>,<window>,<syscalls>,<reads>
# that build/bench/overhead and make bench-arm64 print (other lines are
# ignored; the verdict, met or MISSED with the targets, is the bench's own:
# bench/overhead_report.c holds them); a peer's row follows its profile's rows, with its ratio to
# libtopdown's pair and pair+result.  usage: make bench-table, or
#   ... | sh bench/overhead-table.sh [--update README.md]
# With --update, the table between the README's overhead-table markers is
# replaced and nothing is printed.
set -eu
table=$(awk -F, '
BEGIN {
	print "| profile | sequence | library instructions | window | syscalls | counter reads | target |"
	print "|---|---|---:|---:|---:|---:|---|"
}
$1 == "overhead" && NF == 8 {
	instr[$2 "," $3] = $4
	printf "| %s | %s | %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6, $7, $8
	n++
}
$1 == "peer" && NF == 8 {
	pair = instr[$3 ",pair"]
	res = instr[$3 ",pair+result"]
	printf "| %s | %s pair (peer) | %s | %s | %s | %s | %s |\n", $3, $2, $5,
		$6, $7, $8, (pair && res) ? \
		sprintf("%.1fx pair, %.1fx pair+result", $5 / pair, $5 / res) : "-"
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
