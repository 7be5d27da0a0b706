#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The manual pages: every one renders without a single groff warning
# (man --warnings and groff -ww, every warning category), every function
# and struct declared in the public header has a page that names it, and
# topdown(1) and topdown(7) exist.  Usage: check-man.sh HEADER MANDIR
set -u
header=${1:-include/topdown.h}
mandir=${2:-libtopdown/man}
fail=0
problem() { echo "check-man: $*" >&2; fail=1; }

command -v groff >/dev/null || { echo "check-man: groff missing (apt install groff-base)" >&2; exit 1; }
command -v man >/dev/null || { echo "check-man: man missing (apt install man-db)" >&2; exit 1; }

major=$(sed -n 's/^#define TD_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
minor=$(sed -n 's/^#define TD_VERSION_MINOR \([0-9]*\)$/\1/p' "$header")

# The page a name resolves to, following one .so link.
target() {
	so=$(sed -n 's/^\.so \(.*\)$/\1/p' "$1")
	if [ -n "$so" ]; then echo "$mandir/$so"; else echo "$1"; fi
}

pages=$(find "$mandir" -name '*.[137]' | sort)
[ -n "$pages" ] || problem "no pages under $mandir"
for p in $pages; do
	t=$(target "$p")
	[ -f "$t" ] || { problem "$p: .so to missing $t"; continue; }
	[ "$t" = "$p" ] || continue
	grep -q "^\.TH .* \"libtopdown $major\.$minor\" " "$p" ||
		problem "$p: .TH does not name libtopdown $major.$minor"
	out=$( (cd "$mandir" && LC_ALL=C.UTF-8 MANWIDTH=80 \
		man --warnings=w -E UTF-8 -l -Tutf8 "${p#"$mandir"/}" >/dev/null) 2>&1)
	[ -z "$out" ] || problem "$p: man --warnings: $out"
	out=$(groff -s -t -I "$mandir" -man -ww -z -Tutf8 "$p" 2>&1)
	[ -z "$out" ] || problem "$p: groff -ww: $out"
done

# Every TD_API function (the name before the '(' of its declaration) and
# every struct defined in the header: a page of that name in section 3,
# whose NAME line lists it.
names=$(sed -n 's/^TD_API .*[ *]\([a-z_0-9]*\)(.*/\1/p' "$header")
structs=$(sed -n 's/^struct \([a-z_0-9]*\) {.*/\1/p' "$header")
[ -n "$names" ] || problem "no TD_API function found in $header"
[ "$(echo "$names" | wc -l)" -eq "$(grep -c '^TD_API ' "$header")" ] ||
	problem "a TD_API line of $header without 'name(' on it: parse failed"
for n in $names $structs; do
	p=$mandir/man3/$n.3
	[ -f "$p" ] || { problem "$n: no page $p"; continue; }
	t=$(target "$p")
	sed -n '/^\.SH NAME/{n;p;}' "$t" | grep -qw "$n" ||
		problem "$n: $t does not list it in NAME"
done
for p in man1/topdown.1 man7/topdown.7; do
	[ -f "$mandir/$p" ] || problem "no page $mandir/$p"
done

[ "$fail" -eq 0 ] && echo "check-man: $(echo "$pages" | wc -l) pages clean, every function and struct documented"
exit "$fail"
