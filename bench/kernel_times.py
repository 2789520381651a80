"""Where a config's time goes, kernel by kernel: from Nsight Compute's raw CSV of
`gpu__time_duration.sum` over an attn_bench run (bench/kernel-times writes it), each kernel's
launches, median duration and share of the run's GPU time, in order of first launch.

    python3 bench/kernel_times.py NCU.csv
"""
import csv
import statistics
import sys


def durations(path):
    """({kernel name: [durations]} with names cut before their template arguments, the time unit).
    ncu's own lines (==PROF==, the program's output) are skipped: its CSV rows are quoted."""
    with open(path, newline="") as f:
        rows = list(csv.reader(line for line in f if line.startswith('"')))
    if len(rows) < 3:
        raise SystemExit(f"kernel_times: no kernel rows in {path}")
    head, units = rows[0], rows[1]
    name_col, time_col = head.index("Kernel Name"), head.index("gpu__time_duration.sum")
    out = {}
    for r in rows[2:]:
        name = r[name_col].split("(")[0].split("<")[0].strip()
        out.setdefault(name, []).append(float(r[time_col].replace(",", "")))
    return out, units[time_col]


def table(times, unit):
    total = sum(sum(v) for v in times.values())
    lines = [f"| kernel | launches | median ({unit}) | share of the time |", "|---|---|---|---|"]
    for name, v in times.items():
        lines.append(f"| {name} | {len(v)} | {statistics.median(v):.1f} | {sum(v) / total:.1%} |")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(table(*durations(sys.argv[1])))


if __name__ == "__main__":
    main()
