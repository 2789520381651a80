"""Merges attn_bench's JSON and peers.py's JSON into markdown tables, with the open issues' targets
(each issue's "Done means" for one bench run).

Prefill configs (issue: performance III), ratios of TF/s (each side counting its own unmasked
pairs; both sides build the same documents; the random top-k selections differ by their seeds,
not by their density). Where peers.py ran with --autotune, FlexAttention's figure of a masked
config is the faster of its default and max-autotune compiles:
  - dense and causal configs (those SDPA runs): >= 1.0x SDPA's cuDNN backend
  - other masked configs: >= 1.3x FlexAttention
  - FP8 inputs (*_fp8: q, k, v in e4m3, the dense and causal configs at D = 128 and 256): >= 1.6x
    our bf16 kernel on the same config (the name without _fp8), in the same run
  - no local memory (register spills) in the kernel

Decode configs (decode_*: one query token against a KV cache; issue: inference II), ratios of time
(both sides move the same bytes); the peers run on the contiguous cache only, so a paged config is
set against the peers' figures of its contiguous twin:
  - contiguous configs: >= 1.0x the faster SDPA backend (FA2, cuDNN)
  - ragged configs: >= 85% of the copy bandwidth attn_bench measured
  - paged configs: within 1.05x of our time on the contiguous cache

Forward + backward (fwdbwd_*: the forward with lse, then the backward; TF/s = 3.5 * 4 * D * pairs
/ time on both sides, FlashAttention's count, 3.5 * 2 * (D + Dv) * pairs where v has a head dim of
its own; the backward alone, ours only, 2.5 times the forward's; issue: training II):
  - dense and causal configs (those SDPA runs) below head dim 256: >= 0.9x SDPA's cuDNN backend
  - other masked configs, and every config at head dim 256: >= 1.2x FlexAttention
  - MLA's head dims (fwdbwd_mla_*, a Dv field): >= 1.0x FlexAttention (issue 36)
  - a head dim our backward does not serve counts as missed ("unsupported")
  The roofline of these compute-bound rows is the GPU's dense bf16 tensor-core rate: "of peak" is
  TF/s over the nominal rate of the device attn_bench names (NOMINAL_DENSE_BF16_TFLOPS; "-" for a
  device not in that table).

Chunked prefill (prefill_chunk_*: new tokens of each sequence against its KV cache, contiguous
and paged, in TF/s), set against the same chunk as a forward call without a cache (the *_forward
twin):
  - paged configs (page size >= 64): >= 0.9x the plain forward

Token-level selection (tokens_*: programs with token lists, on the decode kernels; TF/s = 2 *
(D + Dv) * kept pairs / time, TB/s = the K and V rows the lists name / time, K rows only where v
is k's first columns: the tokens_mla_* rows at MLA's 576 / 512), beside FlexAttention on the same
lists as a dense mask where peers.py ran it: no target yet (the DeepSeek issue's, for
tokens_mla_prefill: 50% of the bf16 matrix rate).

MLA decode (decode_mla_*: multi-head latent attention's absorbed decode step, q and k of 576
columns, v the first 512 of k's rows, on the family a compile chooses): TB/s = each sequence's K rows
once, q and out / time; its fraction of the read bandwidth; TF/s = 2 * (D + Dv) * kept pairs /
time (the 128-head rows may be bound by the tensor cores). No peer (peers.py runs none), no target
yet.

Through Python (peers.py's "flexjit.torch" rows: flexjit.torch.flex_attention timed as the peers
are), set against attn_bench's C++ figures of the same configs; and the host's cost per call of a
tiny causal forward, C++ (attn_bench) and Python:
  - flexjit.torch's cost per call at most 20 us over the C++ call's

    python3 bench/compare.py OURS.json [PEERS.json]
"""
import json
import sys

FA2, CUDNN, FLEX, PYTHON = "FLASH_ATTENTION", "CUDNN_ATTENTION", "flex", "flexjit.torch"
FLEX_AUTOTUNE = "flex_autotune"  # peers.py --autotune: FlexAttention's own best tile per mask
PYTHON_US_OVER_CPP = 20.0
PREFILL_X_CUDNN, PREFILL_X_FLEX = 1.0, 1.3
FP8_SUFFIX, FP8_X_BF16 = "_fp8", 1.6
FWDBWD_X_CUDNN, FWDBWD_X_FLEX, FWDBWD_FLEX_ONLY_D = 0.9, 1.2, 256
FWDBWD_MLA_X_FLEX = 1.0
CHUNK_X_FORWARD = 0.9
DECODE_X_SDPA, DECODE_RAGGED_COPY_FRACTION, PAGED_OVER_CONTIGUOUS = 1.0, 0.85, 1.05
# Dense (not sparse) bf16 tensor-core TF/s of each GPU's data sheet, by a part of the name CUDA
# gives it; the first match wins.
NOMINAL_DENSE_BF16_TFLOPS = [("H100 80GB HBM3", 989.4), ("H100 SXM", 989.4), ("H100 NVL", 835.5), ("H100 PCIe", 756.5),
                             ("H200", 989.4), ("A100", 312.0)]


def nominal_peak(device):
    """The device's dense bf16 tensor-core TF/s, or None for a device not in the table."""
    return next((tf for part, tf in NOMINAL_DENSE_BF16_TFLOPS if part in (device or "")), None)


def load(path):
    with open(path) as f:
        doc = json.load(f)
    return doc if isinstance(doc, dict) else {"rows": doc}


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def flags(checks):
    misses = [text for ok, text in checks if not ok]
    return "MISS: " + "; ".join(misses) if misses else ("ok" if checks else "not timed")


def pairs_note(name, r, peer_row, notes):
    if peer_row and r.get("pairs") and abs(peer_row["pairs"] / r["pairs"] - 1) > 1e-3:
        notes.append(f"{name}: unmasked pairs differ (ours {r['pairs']}, peers {peer_row['pairs']}; "
                     f"density {r.get('density', 0):.4f} vs {peer_row['density']:.4f})")


def fwdbwd_table(ours, peers, checks_out, notes, peak=None):
    print("| config | fwd+bwd ms | TF/s | bwd ms | bwd TF/s | flex TF/s | FA2 TF/s | cuDNN TF/s | x flex | x FA2 | "
          "x cuDNN | of peak | targets |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in ours:
        name = r["cfg"]
        tf = r.get("tflops")
        peer_tf = {s: peers[(name, s)]["tflops"] for s in (FLEX, FA2, CUDNN) if (name, s) in peers}
        ratio = lambda p: tf / p if tf and p else None
        x_flex, x_fa2, x_cudnn = ratio(peer_tf.get(FLEX)), ratio(peer_tf.get(FA2)), ratio(peer_tf.get(CUDNN))

        checks = []  # (met, text)
        if "error" in r:
            checks.append((False, "error: " + r["error"][:80]))
        elif "unsupported" in r:
            checks.append((False, "unsupported: " + r["unsupported"].strip().splitlines()[-1].strip()[:120]))
        elif tf is not None:
            if "Dv" in r:
                if x_flex is not None:
                    checks.append((x_flex >= FWDBWD_MLA_X_FLEX, f"flex {x_flex:.2f}x (>= {FWDBWD_MLA_X_FLEX})"))
            elif x_cudnn is not None and r.get("D", 0) < FWDBWD_FLEX_ONLY_D:
                checks.append((x_cudnn >= FWDBWD_X_CUDNN, f"cuDNN {x_cudnn:.2f}x (>= {FWDBWD_X_CUDNN})"))
            elif x_flex is not None:
                checks.append((x_flex >= FWDBWD_X_FLEX, f"flex {x_flex:.2f}x (>= {FWDBWD_X_FLEX})"))
        checks_out += checks

        print(f"| {name} | {fmt(r.get('ms'), '.3f')} | {fmt(tf, '.1f')} | {fmt(r.get('bwd_ms'), '.3f')} | "
              f"{fmt(r.get('bwd_tflops'), '.1f')} | {fmt(peer_tf.get(FLEX), '.1f')} | {fmt(peer_tf.get(FA2), '.1f')} | "
              f"{fmt(peer_tf.get(CUDNN), '.1f')} | {fmt(x_flex, '.2f')} | {fmt(x_fa2, '.2f')} | "
              f"{fmt(x_cudnn, '.2f')} | {fmt(tf / peak if tf and peak else None, '.2f')} | {flags(checks)} |")
        pairs_note(name, r, peers.get((name, FLEX)), notes)


def prefill_table(ours, peers, checks_out, notes):
    bf16_tflops = {r["cfg"]: r.get("tflops") for r in ours}
    print("| config | ms | TF/s | flex TF/s | FA2 TF/s | cuDNN TF/s | x flex | x FA2 | x best | regs / local B | targets |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    mask_times = []  # flex's create_block_mask, and our prepare step where a config has one
    for r in ours:
        name = r["cfg"]
        tf = r.get("tflops")
        peer_tf = {s: peers[(name, s)]["tflops"] for s in (FLEX, FA2, CUDNN) if (name, s) in peers}
        best = max(peer_tf.values(), default=None)
        ratio = lambda p: tf / p if tf and p else None
        x_flex, x_fa2, x_best = ratio(peer_tf.get(FLEX)), ratio(peer_tf.get(FA2)), ratio(best)
        x_cudnn = ratio(peer_tf.get(CUDNN))

        checks = []  # (met, text)
        if "error" in r:
            checks.append((False, "error: " + r["error"][:80]))
        elif tf is not None:
            if x_cudnn is not None:
                checks.append((x_cudnn >= PREFILL_X_CUDNN, f"cuDNN {x_cudnn:.2f}x (>= {PREFILL_X_CUDNN})"))
            elif x_flex is not None:
                checks.append((x_flex >= PREFILL_X_FLEX, f"flex {x_flex:.2f}x (>= {PREFILL_X_FLEX})"))
            twin = bf16_tflops.get(name.removesuffix(FP8_SUFFIX)) if name.endswith(FP8_SUFFIX) else None
            if twin:
                checks.append((tf / twin >= FP8_X_BF16, f"bf16 {tf / twin:.2f}x (>= {FP8_X_BF16})"))
        if r.get("local_bytes") is not None:
            checks.append((r["local_bytes"] == 0, f"local {r['local_bytes']} B"))
        checks_out += checks

        regs = f"{r['regs']} / {r['local_bytes']}" if r.get("regs") is not None else "-"
        print(f"| {name} | {fmt(r.get('ms'), '.3f')} | {fmt(tf, '.1f')} | {fmt(peer_tf.get(FLEX), '.1f')} | "
              f"{fmt(peer_tf.get(FA2), '.1f')} | {fmt(peer_tf.get(CUDNN), '.1f')} | {fmt(x_flex, '.2f')} | "
              f"{fmt(x_fa2, '.2f')} | {fmt(x_best, '.2f')} | {regs} | {flags(checks)} |")

        flex_row = peers.get((name, FLEX))
        pairs_note(name, r, flex_row, notes)
        if flex_row and flex_row.get("block_mask_ms") is not None:
            mask_times.append(f"{name} {flex_row['block_mask_ms']:.2f}"
                              + (f" (ours {r['prepare_ms']:.2f})" if r.get("prepare_ms") is not None else ""))
    if mask_times:
        notes.append("create_block_mask, warm, ms: " + ", ".join(mask_times))


def decode_table(ours, ours_by_name, peers, checks_out, notes):
    print("| config | us | TB/s | of copy | of read | / contiguous | flex us | FA2 us | cuDNN us | x flex | x SDPA | targets |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in ours:
        name = r["cfg"]
        twin = r.get("contiguous_cfg", name)  # the peers' config, and our own contiguous run
        paged = twin != name
        us = r.get("us")
        peer_us = {s: 1e3 * peers[(twin, s)]["ms"] for s in (FLEX, FA2, CUDNN) if (twin, s) in peers}
        sdpa = min((peer_us[s] for s in (FA2, CUDNN) if s in peer_us), default=None)
        ratio = lambda p: p / us if us and p else None
        x_flex, x_sdpa = ratio(peer_us.get(FLEX)), ratio(sdpa)
        contiguous_us = ours_by_name.get(twin, {}).get("us") if paged else None
        over_contiguous = us / contiguous_us if us and contiguous_us else None
        fraction = r.get("copy_fraction")

        checks = []  # (met, text)
        if "error" in r:
            checks.append((False, "error: " + r["error"][:80]))
        elif us is not None:
            if x_sdpa is not None and not paged:
                checks.append((x_sdpa >= DECODE_X_SDPA, f"SDPA {x_sdpa:.2f}x (>= {DECODE_X_SDPA})"))
            if fraction is not None and r.get("ragged"):
                checks.append((fraction >= DECODE_RAGGED_COPY_FRACTION,
                               f"copy bandwidth {fraction:.0%} (>= {DECODE_RAGGED_COPY_FRACTION:.0%})"))
            if over_contiguous is not None:
                checks.append((over_contiguous <= PAGED_OVER_CONTIGUOUS,
                               f"paged {over_contiguous:.2f}x contiguous (<= {PAGED_OVER_CONTIGUOUS})"))
        checks_out += checks

        print(f"| {name} | {fmt(us, '.1f')} | {fmt(r.get('tbps'), '.2f')} | {fmt(fraction, '.0%')} | "
              f"{fmt(r.get('read_fraction'), '.0%')} | "
              f"{fmt(over_contiguous, '.2f')} | {fmt(peer_us.get(FLEX), '.1f')} | {fmt(peer_us.get(FA2), '.1f')} | "
              f"{fmt(peer_us.get(CUDNN), '.1f')} | {fmt(x_flex, '.2f')} | {fmt(x_sdpa, '.2f')} | {flags(checks)} |")

        if paged:
            continue  # its peers are the contiguous row's, noted there
        for s in (FLEX, FA2, CUDNN):
            p = peers.get((twin, s))
            if p and r.get("bytes") and p["bytes"] != r["bytes"]:
                notes.append(f"{name}: bytes differ (ours {r['bytes']}, {s} {p['bytes']})")
            if p and p.get("kv_heads_expanded"):
                notes.append(f"{name}: {s} refused GQA ({p.get('gqa_error', '?')[:60]}) and ran on k, v with their "
                             f"heads repeated, reading {r['Hq'] // r['Hkv']}x the bytes credited to it")
            if p and p.get("block_mask_ms") is not None:
                notes.append(f"{name}: flex's block mask of the sequence lengths, create_block_mask warm: "
                             f"{p['block_mask_ms']:.2f} ms")


def chunk_table(ours, peers, checks_out):
    """Chunked prefill against the plain forward of the same chunk (the *_forward twin)."""
    forward = {r["cfg"][: -len("_forward")]: r for r in ours if r["cfg"].endswith("_forward")}
    print("| config | ms | TF/s | x plain forward | targets |")
    print("|---|---|---|---|---|")
    flex = {name: p["tflops"] for (name, s), p in peers.items() if s == FLEX and name in
            {r["cfg"] for r in ours}}
    for r in ours:
        if r["cfg"].endswith("_forward"):
            continue
        twin = forward.get(r["cfg"].split("_paged")[0].removesuffix("_qoffset"))
        tf, base = r.get("tflops"), twin and twin.get("tflops")
        ratio = tf / base if tf and base else None
        checks = []
        if "error" in r:
            checks.append((False, "error: " + r["error"][:80]))
        elif "_paged" in r["cfg"] and int(r["cfg"].split("_paged")[1]) >= 64 and ratio is not None:
            checks.append((ratio >= CHUNK_X_FORWARD, f"forward {ratio:.2f}x (>= {CHUNK_X_FORWARD})"))
        checks_out += checks
        target = flags(checks) if checks or tf is None else "- (no target)"
        print(f"| {r['cfg']} | {fmt(r.get('ms'), '.3f')} | {fmt(tf, '.1f')} | {fmt(ratio, '.2f')} | {target} |")
    for name, r in forward.items():
        peer = flex.get(name + "_forward")
        note = f"- (flex {peer:.1f} TF/s: {r['tflops'] / peer:.2f}x)" if peer and r.get("tflops") else "-"
        print(f"| {name}_forward | {fmt(r.get('ms'), '.3f')} | {fmt(r.get('tflops'), '.1f')} | 1.00 | {note} |")


def tokens_table(ours, peers, checks_out, notes):
    """Token-level selection, beside FlexAttention on the same lists (peers.py run_tokens) where it ran."""
    print("| config | ms | TF/s | TB/s | flex TF/s | x flex | targets |")
    print("|---|---|---|---|---|---|---|")
    for r in ours:
        name = r["cfg"]
        tf = r.get("tflops")
        flex_row = peers.get((name, FLEX))
        flex_tf = flex_row.get("tflops") if flex_row else None
        checks = [(False, "error: " + r["error"][:80])] if "error" in r else []
        checks_out += checks
        target = flags(checks) if checks or tf is None else "- (no target)"
        print(f"| {name} | {fmt(r.get('ms'), '.4f')} | {fmt(tf, '.1f')} | {fmt(r.get('tbps'), '.2f')} | "
              f"{fmt(flex_tf, '.1f')} | {fmt(tf / flex_tf if tf and flex_tf else None, '.2f')} | {target} |")
        pairs_note(name, r, flex_row, notes)
        if flex_row and flex_row.get("block_mask_ms") is not None:
            notes.append(f"{name}: flex's block mask of the listed keys, create_block_mask warm: "
                         f"{flex_row['block_mask_ms']:.2f} ms")


def mla_decode_table(ours, checks_out, notes):
    """MLA's decode step, ours only: bytes and FLOPs both, since either may bound it."""
    print("| config | ms | TB/s | read fraction | TF/s |")
    print("|---|---|---|---|---|")
    for r in ours:
        if "error" in r:
            checks_out.append((False, f"{r['cfg']}: error: {r['error'][:80]}"))
            notes.append(f"{r['cfg']}: {r['error'][:200]}")
        print(f"| {r['cfg']} | {fmt(r.get('ms'), '.4f')} | {fmt(r.get('tbps'), '.2f')} | "
              f"{fmt(r.get('read_fraction'), '.0%')} | {fmt(r.get('tflops'), '.1f')} |")


def take_autotuned_flex(peers):
    """Where peers.py timed FlexAttention with max-autotune too, that figure is the FlexAttention
    peer (the faster of the two: autotuning may pick the default tile). Returns 'name (default TF/s)'
    for each config it replaced."""
    replaced = []
    for (name, system), row in list(peers.items()):
        default = peers.get((name, FLEX))
        if system == FLEX_AUTOTUNE and (default is None or row["tflops"] > default["tflops"]):
            replaced.append(f"{name} ({fmt(default and default['tflops'], '.1f')})")
            peers[(name, FLEX)] = row
    return replaced


def python_table(ours, peers, host, checks_out):
    """flexjit through Python against the C++ call: the configs peers.py timed flexjit.torch on,
    then the host's cost per call (host: peers.py's host_overhead rows by system, and attn_bench's
    figure under "C++")."""
    timed = [r for r in ours if (r["cfg"], PYTHON) in peers]
    if timed:
        print("| config | C++ TF/s | flexjit.torch TF/s | Python / C++ |")
        print("|---|---|---|---|")
        for r in timed:
            tf, py = r.get("tflops"), peers[(r["cfg"], PYTHON)]["tflops"]
            print(f"| {r['cfg']} | {fmt(tf, '.1f')} | {py:.1f} | {fmt(py / tf if tf else None, '.2f')} |")
    cpp, py = host.get("C++"), host.get(PYTHON)
    if cpp is not None or py is not None:
        figures = ", ".join(f"{s} {us:.1f} us" for s, us in host.items())
        print(f"\nHost cost per call (causal forward, B = H = 1, T = 128, D = 64, calls back to back): {figures}")
    if cpp is not None and py is not None:
        checks_out.append((py - cpp <= PYTHON_US_OVER_CPP, f"Python's cost per call +{py - cpp:.1f} us (<= 20)"))


def read_bandwidth_text(doc):
    """The read probe's figure of the run, the roofline of the decode rows' TB/s."""
    read = doc.get("read_bandwidth")
    return (f"read bandwidth {read['tbps']:.2f} TB/s (a kernel that only reads {read['bytes'] / 2**30:.0f} GiB, "
            f"median of {read['reps']}: decode's roofline)" if read else "read bandwidth not measured")


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    doc = load(argv[1])
    ours = doc["rows"]
    peers = {}
    host = {"C++": doc["host_overhead"]["us_per_call"]} if "host_overhead" in doc else {}
    for r in load(argv[2])["rows"] if len(argv) == 3 else []:
        if "ms" in r:
            peers[(r["cfg"], r["sys"])] = r
        elif "us_per_call" in r:
            host[r["sys"]] = r["us_per_call"]
    autotuned = take_autotuned_flex(peers)

    decode = [r for r in ours if r.get("kind") == "decode"]
    fwdbwd = [r for r in ours if r.get("kind") == "fwdbwd"]
    chunks = [r for r in ours if r.get("kind") == "prefill_chunk"]
    tokens = [r for r in ours if r.get("kind") == "tokens"]
    mla_decode = [r for r in ours if r.get("kind") == "decode_mla"]
    prefill = [r for r in ours if r.get("kind") not in ("decode", "fwdbwd", "prefill_chunk", "tokens", "decode_mla")]
    checks, notes = [], []
    if prefill:
        prefill_table(prefill, peers, checks, notes)
    if decode:
        if prefill:
            print()
        copy = doc.get("copy_bandwidth")
        measured = (f"copy bandwidth {copy['tbps']:.2f} TB/s (cuMemcpyDtoD of {copy['bytes'] / 2**30:.0f} GiB, "
                    f"bytes read + written / time, median of {copy['reps']})" if copy else "copy bandwidth not measured")
        if doc.get("read_bandwidth"):
            measured += "; " + read_bandwidth_text(doc)
        print(f"Decode: {measured}; TB/s = bytes of K and V of every sequence, q and out / time")
        print()
        decode_table(decode, {r["cfg"]: r for r in decode}, peers, checks, notes)
    if fwdbwd:
        if prefill or decode:
            print()
        peak = nominal_peak(doc.get("device"))
        print("Forward + backward: the forward with lse, then the backward, timed together (TF/s = 3.5 * 4 * D * "
              "unmasked pairs / time, FlashAttention's count); bwd: the backward alone (2.5 * 4 * D * pairs / time); "
              + (f"of peak: TF/s / {peak:.1f}, the {doc['device']}'s nominal dense bf16 tensor rate (the roofline)"
                 if peak else f"of peak: no nominal rate known for {doc.get('device', 'the device')!r}"))
        print()
        fwdbwd_table(fwdbwd, peers, checks, notes, peak)
    if chunks:
        print()
        print("Chunked prefill: the new tokens of each sequence against its KV cache (causal among themselves), "
              "TF/s = 4 * D * kept pairs / time; the plain forward is the same chunk without a cache")
        print()
        chunk_table(chunks, peers, checks)
    if tokens:
        if prefill or decode or fwdbwd or chunks:
            print()
        print("Token-level selection: each query token's list of K keys, causal on top, on the decode kernel "
              "(one CTA per token and kv head); TF/s = 4 * D * kept (row, listed key) pairs / time; TB/s = the K "
              "and V rows of each list's distinct kept keys / time; flex: FlexAttention with a dense mask of the "
              "same lists")
        print()
        tokens_table(tokens, peers, checks, notes)
    if mla_decode:
        if prefill or decode or fwdbwd or chunks or tokens:
            print()
        print("MLA decode: one token per sequence, q and k of D columns, v k's first Dv (a view of k), one kv head; "
              "TB/s = each sequence's K rows once, q and out / time; read fraction: TB/s over the read bandwidth; "
              "TF/s = 2 * (D + Dv) * kept pairs / time; no peer; " + read_bandwidth_text(doc))
        print()
        mla_decode_table(mla_decode, checks, notes)
    if host or any(s == PYTHON for _, s in peers):
        print()
        print("Through Python: flexjit.torch.flex_attention, timed as the peers are, against the C++ call")
        print()
        python_table(prefill + fwdbwd, peers, host, checks)
    if autotuned:
        notes.append("FlexAttention figures of " + ", ".join(autotuned) + " are max-autotune's (its default "
                     "compile's TF/s in parentheses)")
    met = sum(ok for ok, _ in checks)
    own = ((["spills"] if prefill else []) + (["copy bandwidth", "paged / contiguous"] if decode else [])
           + (["gradients", "backward support"] if fwdbwd else []) + (["chunked prefill"] if chunks else [])
           + (["token-level selection"] if tokens else []) + (["MLA decode errors"] if mla_decode else []))
    print()
    print(f"targets: {met} met, {len(checks) - met} missed"
          + ("" if peers else f" (no peer figures: only {', '.join(own)} checked)"))
    for n in notes:
        print(f"- {n}")


if __name__ == "__main__":
    main(sys.argv)
