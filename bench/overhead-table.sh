#!/bin/sh
# The README's overhead table (markdown) from the machine-readable lines
#   overhead,<profile>,<sequence>,<instructions>,<window>,<syscalls>,<reads>,<verdict>
#   peer,<peer>,<profile>,pair,<instructions>,<window>,<syscalls>,<reads>
# that build/bench/overhead and make bench-arm64 print (other lines are
# ignored; the verdict, met or MISSED with the targets, is the bench's own:
# bench/overhead_report.c holds them); a peer's row follows its profile's rows, with its ratio to
# libtopdown's pair and pair+result.  usage: make bench-table, or
#   ... | sh bench/overhead-table.sh [--update README.md]
# The reasons the rows name ("# why <key>: <text>" lines) follow the
# table as a list.  With --update, the table and the list between the
# README's overhead-table and overhead-why markers are replaced and
# nothing is printed.
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
/^# why [^:]*: / {
	key = substr($0, 7, index($0, ": ") - 7)
	if (!(key in why)) {
		why[key] = substr($0, index($0, ": ") + 2)
		order[nw++] = key
	}
}
END {
	if (!n) exit 1
	print ""
	for (i = 0; i < nw; i++)
		printf "- why `%s`: %s\n", order[i], why[order[i]]
}')
whys=${table#*"

"}
table=${table%%"

"*}
if [ "${1:-}" = --update ]; then
	readme=$2
	tmp=$readme.tmp.$$
	TABLE=$table WHYS=$whys awk '
		/<!-- overhead-table begin -->/ { print; print ENVIRON["TABLE"]; skip = 1; next }
		/<!-- overhead-why begin -->/ { print; print ENVIRON["WHYS"]; skip = 1; next }
		/<!-- overhead-table end -->/ { skip = 0; found++ }
		/<!-- overhead-why end -->/ { skip = 0; found++ }
		!skip { print }
		END { if (found != 2) exit 1 }' "$readme" >"$tmp"
	mv "$tmp" "$readme"
else
	printf '%s\n\n%s\n' "$table" "$whys"
fi
