"""The table of bench/ab-templates: per config and figure, each version's median over its rounds
(OUT/NAME.roundR.json, attn_bench's JSON) and its ratio to the first version named.

Figures: TF/s of the forward (prefill rows) or of forward + backward and of the backward alone
(fwdbwd rows); "best" is the TF/s of the fastest launch (ms_min), where some launches run far
slower than the median one; decode rows give TB/s.

    python3 bench/ab_table.py OUT NAME [NAME ...]
"""
import glob
import os
import statistics
import sys

from compare import load  # attn_bench's JSON, an array of rows or {"rows": [...]}


def figures(row):
    """(label, value) pairs of one attn_bench row, higher is better."""
    out = []
    if row.get("tbps") is not None:
        out.append(("TB/s", row["tbps"]))
    if row.get("tflops") is not None:
        out.append(("TF/s" if row.get("kind") != "fwdbwd" else "fwd+bwd TF/s", row["tflops"]))
        if row.get("ms") and row.get("ms_min"):
            out.append(("best TF/s" if row.get("kind") != "fwdbwd" else "best fwd+bwd TF/s",
                        row["tflops"] * row["ms"] / row["ms_min"]))
    if row.get("bwd_tflops") is not None:
        out.append(("bwd TF/s", row["bwd_tflops"]))
        if row.get("bwd_ms") and row.get("bwd_ms_min"):
            out.append(("best bwd TF/s", row["bwd_tflops"] * row["bwd_ms"] / row["bwd_ms_min"]))
    return out


def main(out, names):
    values = {}  # (cfg, label) -> name -> [value per round]
    order = []
    for name in names:
        for path in sorted(glob.glob(os.path.join(out, f"{name}.round*.json"))):
            try:
                rows = load(path).get("rows", [])
            except (OSError, ValueError) as e:
                print(f"ab_table: {path}: {e}", file=sys.stderr)
                continue
            for row in rows:
                if not row.get("ok", False):
                    continue
                for label, value in figures(row):
                    key = (row["cfg"], label)
                    if key not in values:
                        values[key] = {}
                        order.append(key)
                    values[key].setdefault(name, []).append(value)
    if not values:
        print("ab_table: no timed rows", file=sys.stderr)
        return 1
    first = names[0]
    print("| config | figure | " + " | ".join(names) + "".join(f" | {n}/{first}" for n in names[1:]) + " |")
    print("|---|---|" + "---|" * (2 * len(names) - 1))
    for cfg, label in order:
        med = {n: statistics.median(v) for n, v in values[(cfg, label)].items()}
        cells = [f"{med[n]:.1f}" if n in med else "-" for n in names]
        ratios = [f"{med[n] / med[first]:.3f}" if n in med and med.get(first) else "-" for n in names[1:]]
        print(f"| {cfg} | {label} | " + " | ".join(cells) + "".join(f" | {x}" for x in ratios) + " |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
