#!/bin/sh
# cache_warm.sh FLEXJIT DIR: warms a fresh cache with two programs' forward and backward kernels
# (-j 2), warms it again (every kernel is then found), then warms a second fresh cache from two
# processes at once: both succeed and the cache ends up holding the same kernels as the first.
set -e
flexjit=$1 dir=$2
rm -rf "$dir"
mkdir -p "$dir"
warm() {
  "$flexjit" cache warm examples/causal.py examples/sliding_window.py --head-dim 64 --dtype bf16 --arch sm_80 \
    --backward -j 2 --cache-dir "$@"
}
echo "first:"
warm "$dir/one"
echo "again:"
warm "$dir/one" | tail -n 1
warm "$dir/two" >"$dir/a.log" 2>&1 &
warm "$dir/two" >"$dir/b.log" 2>&1 || { cat "$dir/b.log"; exit 1; }
wait $! || { cat "$dir/a.log"; exit 1; }
one=$(FLEXJIT_CACHE_DIR="$dir/one" "$flexjit" cache list | awk '{print $NF}' | sort)
two=$(FLEXJIT_CACHE_DIR="$dir/two" "$flexjit" cache list | awk '{print $NF}' | sort)
[ "$one" = "$two" ] || { echo "the caches differ:"; echo "$one"; echo "--"; echo "$two"; exit 1; }
echo "two processes at once: the same $(echo "$two" | wc -l) kernels"
