#!/bin/sh
# write_hostile_programs.sh DIR: writes the generated inputs of the hostile-input CLI tests into
# DIR (the large ones are made here, not checked in).
set -e
dir=$1
rm -rf "$dir"
mkdir -p "$dir"
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
  i=0
  while [ $i -lt 60 ]; do printf '    x = x * x + x\n'; i=$((i + 1)); done
  printf '    return x\n'
} >"$dir/doubling.py"
# 30,000 operands of `and` on one line, and 10,000 straight-line statements: deeper than the
# recursive passes may go, refused as "program too large" (not a stack overflow).
{
  printf 'def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx'
  i=1
  while [ $i -lt 30000 ]; do printf ' and q_idx >= kv_idx'; i=$((i + 1)); done
  printf '\n'
} >"$dir/flat_and.py"
{
  printf 'def score_mod(score, b, h, q_idx, kv_idx):\n    x = score\n'
  i=0
  while [ $i -lt 10000 ]; do printf '    x = x * 1.5 + q_idx\n'; i=$((i + 1)); done
  printf '    return x\n'
} >"$dir/straight_line.py"
