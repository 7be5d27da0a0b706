#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Runs cmocka test binaries in parallel and ends with one line:
#   N passed, M failed[, K skipped]
# adding up cmocka's own per-test counts over every binary.
#
#   run-tests.sh [-j JOBS] [-l LOGDIR] BINARY...
#
# Each binary's output (stdout and stderr) goes to LOGDIR/<name>.log; the
# logs of binaries that failed are printed.  A binary that exits non-zero
# without cmocka reporting a failed test (a crash, a sanitizer or valgrind
# error, a missing summary, a hang) counts as one failed test.  A binary still
# running after TEST_TIMEOUT seconds (default 900) is killed, its threads'
# stacks added to its log.  TEST_RUN, when set,
# is a command prefix (qemu-aarch64 -L ..., valgrind ...), split on spaces.
# Exit status: 0 when nothing failed, 1 otherwise.
set -u

# The process PID and all its descendants, one per line.
family() {
	echo "$1"
	for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		family "$child"
	done
}

# Watchdog: a binary still running after TEST_TIMEOUT seconds is hung (a
# deadlock, say): its threads' stacks go into its log, where a CI run shows
# them, then it is killed, so that a hang fails the suite instead of
# stalling it until the CI's own limit ends the run with no clue.
watch() {
	pid=$1 log=$2 waited=0
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$waited" -ge "$timeout" ]; then
			pids=$(family "$pid")
			echo "== watchdog: still running after $timeout s" \
				"(TEST_TIMEOUT); stacks of" $pids >>"$log"
			for p in $pids; do
				echo "== process $p: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)"
				if command -v gdb >/dev/null; then
					gdb -q -batch -p "$p" -ex 'thread apply all bt' 2>&1
				else
					cat /proc/"$p"/task/*/wchan 2>/dev/null
				fi
			done >>"$log"
			kill -KILL $pids 2>/dev/null
			return
		fi
		sleep 1
		waited=$((waited + 1))
	done
}

if [ "${1:-}" = --one ]; then
	# Worker: run one binary, keep its output and its exit status.
	log=$2/$(basename "$3").log
	timeout=${TEST_TIMEOUT:-900}
	# shellcheck disable=SC2086 # TEST_RUN is a command line on purpose
	${TEST_RUN:-} "$3" >"$log" 2>&1 &
	pid=$!
	watch "$pid" "$log" </dev/null >/dev/null 2>&1 &
	dog=$!
	wait "$pid"
	echo $? >"$log.rc"
	kill "$dog" 2>/dev/null
	exit 0
fi

jobs=2
logdir=build/test
while getopts j:l: opt; do
	case $opt in
	j) jobs=$OPTARG ;;
	l) logdir=$OPTARG ;;
	*) echo "usage: $0 [-j JOBS] [-l LOGDIR] BINARY..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $jobs in
'' | *[!0-9]* | 0) echo "$0: -j wants a positive number, not '$jobs'" >&2; exit 2 ;;
esac
[ $# -gt 0 ] || { echo "$0: no test binaries given" >&2; exit 2; }
mkdir -p "$logdir" || exit 2

for t in "$@"; do
	rm -f "$logdir/$(basename "$t").log.rc"
	printf '%s\n' "$t"
done | xargs -P "$jobs" -I{} sh "$0" --one "$logdir" {}

# cmocka's summary lines: "[  PASSED  ] n test(s)." and the same with
# FAILED and SKIPPED ("..., listed below:").
count() {
	sed -n "s/^\[  $1 *\] \([0-9][0-9]*\) test(s).*/\1/p" "$2" |
		awk '{ n += $1 } END { print n + 0 }'
}

passed=0 failed=0 skipped=0
for t in "$@"; do
	name=$(basename "$t")
	log=$logdir/$name.log
	rc=$(cat "$log.rc" 2>/dev/null || echo 127)
	p=$(count PASSED "$log") f=$(count FAILED "$log") s=$(count SKIPPED "$log")
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	if [ "$f" -ne 0 ]; then
		echo "== $name: FAILED (exit status $rc), $log:"
		cat "$log"
	else
		status="$p passed"
		[ "$s" -ne 0 ] && status="$status, $s skipped"
		echo "== $name: $status"
	fi
done

summary="$passed passed, $failed failed"
[ "$skipped" -ne 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
