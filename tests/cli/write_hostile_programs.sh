#!/bin/sh
# write_hostile_programs.sh DIR: writes the generated inputs of the hostile-input CLI tests into
# DIR (the large ones are made here, not checked in).
set -e
dir=$1
rm -rf "$dir"
mkdir -p "$dir"
# lines N TEXT: N lines of TEXT (pipe through tr -d '\n' for one line of N copies).
lines() { yes "$2" | head -n "$1"; }
# A Latin-1 byte in a comment: Python refuses the file, and so must `check`.
printf 'def mask_mod(b, h, q_idx, kv_idx):\n    # caf\351\n    return q_idx >= kv_idx\n' >"$dir/latin1_comment.py"
# Old Mac line ends (a lone carriage return), which Python accepts.
printf 'def mask_mod(b, h, q_idx, kv_idx):\r    return q_idx >= kv_idx\r' >"$dir/cr_line_ends.py"
# A 100,000-character name one edit away from a defined 100,000-character name: the "did you
# mean" search must not build a table of their lengths' product (80 GB).
long=$(head -c 100000 /dev/zero | tr '\0' a)
printf 'def score_mod(score, b, h, q_idx, kv_idx):\n    %s = 1.0\n    return score + %sb\n' "$long" "${long%a}" \
  >"$dir/long_name.py"
# A program to be named as its own output.
printf 'def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n' >"$dir/own_output.py"
cp "$dir/own_output.py" "$dir/own_output.py.orig"
# Sixty statements `x = x * x + x`: the IR shares each x, so unfolded as a tree it has about 3^60
# nodes. Every pass must be linear in the shared graph.
{
  printf 'def score_mod(score, b, h, q_idx, kv_idx):\n    x = score\n'
  lines 60 '    x = x * x + x'
  printf '    return x\n'
} >"$dir/doubling.py"
# 30,000 operands of `and` on one line, and 10,000 straight-line statements: deeper than the
# recursive passes may go, refused as "program too large" (not a stack overflow).
{
  printf 'def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx'
  lines 29999 ' and q_idx >= kv_idx' | tr -d '\n'
  printf '\n'
} >"$dir/flat_and.py"
{
  printf 'def score_mod(score, b, h, q_idx, kv_idx):\n    x = score\n'
  lines 10000 '    x = x * 1.5 + q_idx'
  printf '    return x\n'
} >"$dir/straight_line.py"
# 100,000 of them: lowering must stay linear in the statements (a run of assignments binds into
# one scope, not a chain that every name lookup walks) and stop at the node budget in seconds.
{
  printf 'def score_mod(score, b, h, q_idx, kv_idx):\n    x = score\n'
  lines 100000 '    x = x * 1.5 + q_idx'
  printf '    return x\n'
} >"$dir/straight_line_100k.py"
# f1(x) = f0(x) + f0(x), 40 levels: inlining would make 2^40 nodes. Lowering counts the nodes it
# makes and stops at the limit.
{
  printf 'def f0(x):\n    return x + 1\n'
  i=1
  while [ $i -lt 40 ]; do printf 'def f%d(x):\n    return f%d(x) + f%d(x)\n' $i $((i - 1)) $((i - 1)); i=$((i + 1)); done
  printf 'def score_mod(score, b, h, q_idx, kv_idx):\n    return f39(score)\n'
} >"$dir/doubling_calls.py"
# The same doubling through closures of one lambda, on a function that makes no node: counted
# by calls, so it stops too.
{
  printf 'twice = lambda f: lambda x: f(f(x))\nident = lambda x: x\n'
  printf 'def score_mod(score, b, h, q_idx, kv_idx):\n    return %sident%s(score)\n' \
    "$(lines 40 'twice(' | tr -d '\n')" \
    "$(lines 40 ')' | tr -d '\n')"
} >"$dir/twice_40.py"
# Recursion that makes a new closure at every level: never the same (function, closure) pair, so
# the call depth limit stops it.
printf 'def make():\n    return lambda x: make()(x)\n\ndef score_mod(score, b, h, q_idx, kv_idx):\n    return make()(score)\n' \
  >"$dir/closure_recursion.py"
