#!/bin/sh
# cache_warm.sh FLEXJIT DIR: warms a fresh cache with two programs' forward and backward kernels
# (-j 2), warms it again (every kernel is then found), then warms a second fresh cache from two
# processes at once: both succeed and the cache ends up holding the same kernels as the first.
# Then the backward modules of deterministic calls and of calls that ask for a captured tensor's
# gradient: one more kernel each, found the second time.
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
variant() {
  "$flexjit" cache warm examples/relative_position_bias.py --head-dim 64 --dtype bf16 --arch sm_80 --backward \
    --cache-dir "$dir/one" "$@"
}
count() { FLEXJIT_CACHE_DIR="$dir/one" "$flexjit" cache list | wc -l; }
variant >/dev/null
last=$(count)
for v in --deterministic "--grads rel_bias"; do
  # shellcheck disable=SC2086
  out=$(variant $v)
  echo "$out" | grep -q "compiled 'examples/relative_position_bias.py' d64 bf16 sm_80 backward (" ||
    { echo "$v: no backward variant compiled:"; echo "$out"; exit 1; }
  now=$(count)
  [ "$now" -gt "$last" ] || { echo "$v: the cache still holds $now kernels"; exit 1; }
  # shellcheck disable=SC2086
  variant $v | grep -q "cached   'examples/relative_position_bias.py' d64 bf16 sm_80 backward (" ||
    { echo "$v: not found the second time"; exit 1; }
  [ "$(count)" -eq "$now" ] || { echo "$v: the second warm compiled again"; exit 1; }
  echo "$v: $last -> $now kernels"
  last=$now
done
