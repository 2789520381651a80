#!/bin/sh
# cache_hit_log.sh FLEXJIT PROGRAM DIR: compiles PROGRAM into a fresh kernel cache in DIR, then
# emits it again (a disk-cache hit in a new process) and prints that run's dynamic loader log, so
# the test can check which libraries a cache hit loads.
set -e
flexjit=$1 program=$2 dir=$3
rm -rf "$dir"
mkdir -p "$dir"
FLEXJIT_CACHE_DIR="$dir" "$flexjit" emit cubin "$program" -o "$dir/first.cubin" >/dev/null
FLEXJIT_CACHE_DIR="$dir" LD_DEBUG=libs "$flexjit" emit cubin "$program" -o "$dir/second.cubin" 2>&1
cmp "$dir/first.cubin" "$dir/second.cubin"
echo "cache hit: the same cubin"
