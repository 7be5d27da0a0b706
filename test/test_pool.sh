#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/pool (a thread pool whose jobs run a recursive quicksort and a
# loop kernel, regions named by string and by a static struct) under
# topdown run --emulate, its report against the truth of the same run
# (make test-pool).  test/truth_shim.c, preloaded after the emulator,
# declares each thread's work and keeps the truth of every region apart
# from the library; test/pool_check.c compares: calls per thread and for
# all threads, max_depth, slots (exact), shares within err, nothing unreliable
# or open.  Usage: test/test_pool.sh BUILD_DIR
set -u
B=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# The example as users build it (the static library), unchanged.
if "$B/topdown" run --emulate -f csv -o "$tmp/s.csv" -- "$B/examples/pool" \
	>"$tmp/out" 2>&1 && grep -q '^region,quicksort,all,' "$tmp/s.csv"; then
	ok "pool under topdown run --emulate: exit 0, a quicksort all row"
else
	fail "pool under topdown run --emulate"; sed 's/^/    /' "$tmp/out"
fi

# The same source linked with libtopdown.so, its calls wrapped by the shim.
for profile in spr icl; do
	rm -f "$tmp/truth.csv"
	if TD_TRUTH_OUT="$tmp/truth.csv" LD_PRELOAD="$B/test/libtruthshim.so" \
		"$B/topdown" run --emulate --profile $profile -f csv \
		-o "$tmp/r.csv" -- "$B/test/pool-shared" >"$tmp/out" 2>&1 &&
	   "$B/test/pool_check" "$tmp/r.csv" "$tmp/truth.csv" >>"$tmp/out" 2>&1; then
		ok "pool on $profile: report = truth ($(tail -1 "$tmp/out"))"
	else
		fail "pool on $profile: report against truth"
		sed 's/^/    /' "$tmp/out" | head -40
	fi
done

echo "test_pool.sh: $failures failed"
[ "$failures" -eq 0 ]
