#!/bin/sh
# expect_exit.sh [--absent PATH] [--same A B] STATUS TEXT SECONDS MEMORY COMMAND...
# Runs COMMAND in a child limited to SECONDS of wall time and MEMORY, and passes when it exits
# with STATUS, its output (stdout and stderr) contains TEXT, PATH does not exist afterwards and
# files A and B are equal afterwards. A command that runs away in time or memory is killed and
# fails the test. MEMORY is MiB of address space, or rss:MiB of resident memory for a command
# built with AddressSanitizer (which reserves terabytes of address space at start), enforced by
# the sanitizer's hard_rss_limit_mb.
absent= same_a= same_b=
while :; do
  case $1 in
    --absent) absent=$2; shift 2 ;;
    --same) same_a=$2 same_b=$3; shift 3 ;;
    *) break ;;
  esac
done
status=$1 text=$2 seconds=$3 memory=$4
shift 4
command="$*"

case $memory in
  rss:*) output=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=${memory#rss:}" \
                  timeout -s KILL "$seconds" "$@" 2>&1) ;;
  *) output=$( (ulimit -v $((memory * 1024)) && exec timeout -s KILL "$seconds" "$@") 2>&1 ) ;;
esac
rc=$?
fail() {
  printf 'FAILED: %s\n--- command: %s\n--- exit status: %s\n--- output (first 2000 bytes):\n' "$1" "$command" "$rc"
  printf '%s\n' "$output" | head -c 2000
  exit 1
}
[ "$rc" -eq "$status" ] || fail "expected exit status $status"
case $output in
  *"$text"*) ;;
  *) fail "expected the output to contain: $text" ;;
esac
[ -z "$absent" ] || [ ! -e "$absent" ] || fail "$absent was written"
[ -z "$same_a" ] || cmp -s "$same_a" "$same_b" || fail "$same_a was changed"
echo "ok: exit $rc, output contains: $text"
