"""The systems users would otherwise pick, on the configs of bench/attn_bench.cpp (same names,
shapes and masks): torch FlexAttention (torch.compile, static shapes) and, where the pattern is
plain dense or causal, SDPA with the FlashAttention-2 and cuDNN backends. And flexjit itself
through Python (flexjit.torch.flex_attention, the drop-in, called as FlexAttention is) where the
package imports (bench/run-gpu puts the build's on PYTHONPATH): rows of system "flexjit.torch".

    python3 bench/peers.py [--json FILE] [--only NAME[,NAME...]] [--autotune]

--only takes config names; a trailing * takes every name that starts with the rest (fwdbwd_*).

--autotune also times FlexAttention compiled with mode="max-autotune-no-cudagraphs" (it picks
its tile per mask; minutes of autotuning per config) on the configs with a mask or score mod, as
system "flex_autotune"; compare.py then takes it as the FlexAttention figure of those configs.

Times are triton.testing.do_bench medians (it clears the L2 cache before each call).
TF/s = 4 * D * unmasked (q, kv) pairs / time, the pairs counted from the mask itself.
block_mask_ms: create_block_mask for the config's mask, warm (what flex needs per new mask).

host_overhead: the host's cost per call of a tiny causal forward (B = H = 1, T = 128, D = 64,
bf16), HOST_CALLS calls enqueued back to back and one synchronize, median of three loops, for
flex and flexjit.torch; attn_bench measures the C++ call the same way.

Forward + backward configs (fwdbwd_*: a prefill config's name with that prefix, as attn_bench
names them): the forward then autograd's backward, out.backward(dout) on q, k, v that require
grad, timed together; TF/s = 3.5 * 4 * D * pairs / time (FlashAttention's count: the backward
does 2.5 times the forward's FLOPs), as attn_bench counts them. The block mask is built outside
the timed step, as for the forward.

Decode configs (decode_*): one query token per sequence against a contiguous KV cache, q [B, 32,
1, 128], k, v [B, 8, KV, 128], every key kept (flex without a block mask, SDPA with enable_gqa;
a backend that refuses GQA runs on k and v with their heads repeated, and its row says so).
A ragged batch is padded to the cache's KV keys: flex gets a block mask of each sequence's
length, SDPA does not run. TB/s = bytes of the keys and values of every sequence's length, q and
out / time, as attn_bench counts them. attn_bench's paged twins (*_paged64) have no peer run of
their own: naming one in --only runs its contiguous config, which compare.py sets them against.

Token-level selection (tokens_*: attn_bench's programs with `selected: TokenIndices`): for
tokens_prefill_k2048_t8192, FlexAttention with a mask_mod that reads a dense [T, T] bool tensor,
True where the query's list names the key and the key is not after it: the lists of
bench/token_lists.hpp, ranked by the same hash (token_rank), so both sides attend to exactly the
same keys; the block mask is built once, outside the timed call (block_mask_ms). TF/s = 4 * D *
kept pairs / time, as attn_bench counts them. The decode step (tokens_decode_*) has no peer:
FlexAttention has no paged form in its core API and no token lists; naming it in --only runs
nothing here. Nor do the tokens_mla_* rows (MLA's 576 / 512: a dense mask of 32768 x 32768).

MLA decode (attn_bench's decode_mla_*: q and k of 576 columns, v the first 512 of k's) has no
peer: FlashMLA is not installed on the GPU host, and FlexAttention at a q and k head dim of 576
has not been tried here, so it is left out; naming those configs in --only runs nothing here.
"""
import argparse
import functools
import json
import math
import sys
import time

import torch
import torch.nn.functional as F
import triton.testing
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

DEV = "cuda"
DTYPE_NAMES = {torch.bfloat16: "bf16", torch.float16: "fp16"}

# flex recompiles per mask and shape; past the default limit it silently falls back to an
# unfused path, which would time the wrong thing.
torch._dynamo.config.recompile_limit = 1000
torch._dynamo.config.cache_size_limit = 1000
flex = torch.compile(flex_attention, dynamic=False)
flex_autotune = None  # main() sets it with --autotune

try:  # flexjit through Python, where the package is importable
    from flexjit.torch import flex_attention as flexjit_attention
except ImportError as e:
    flexjit_attention = None
    print(f"peers.py: no flexjit.torch rows ({e})", file=sys.stderr)


# Masks and score mods, as FlexAttention users write them.
def causal(b, h, q, k):
    return q >= k


def causal_window(w):
    return lambda b, h, q, k: (q >= k) & (q - k < w)


def sink_window(sinks, w):
    return lambda b, h, q, k: (q >= k) & ((q - k < w) | (k < sinks))


def prefix_lm(p):
    return lambda b, h, q, k: (q >= k) | (k < p)


def document_cuts(T, n):
    """The first token of documents 1..n-1, drawn by a 64-bit LCG (Knuth's MMIX constants) so
    that bench/attn_bench.cpp draws exactly the same documents."""
    x, cuts = 0, set()
    for _ in range(1, n):
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        cuts.add(1 + (x >> 33) % (T - 1))
    return sorted(cuts)


def documents(T, n, gen):
    """n documents (fewer if two cuts collide), causal inside each."""
    cuts = torch.tensor(document_cuts(T, n), dtype=torch.int64)
    starts = torch.zeros(T, dtype=torch.int64)
    starts[cuts] = 1
    doc = torch.cumsum(starts, 0).to(DEV)
    return lambda b, h, q, k: (doc[q] == doc[k]) & (q >= k)


def topk_blocks(T, blk, k, gen):
    """Per query block: the diagonal block and k - 1 random earlier blocks; causal inside."""
    nb = math.ceil(T / blk)
    sel = torch.zeros(nb, nb, dtype=torch.bool)
    for qb in range(nb):
        sel[qb, qb] = True
        sel[qb, torch.randperm(qb, generator=gen)[: k - 1]] = True
    sel = sel.to(DEV)
    return lambda b, h, q, kv: sel[q // blk, kv // blk] & (q >= kv)


def neighbourhood_2d(width, radius):
    """The pixels of a grid of `width` columns within `radius` rows and columns (NATTEN-style)."""
    def mask(b, h, q, k):
        return ((q // width - k // width).abs() <= radius) & ((q % width - k % width).abs() <= radius)
    return mask


def alibi(H):
    slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / H) for i in range(H)], device=DEV)
    return lambda score, b, h, q, k: score + slopes[h] * (k - q)


def softcap(cap):
    return lambda score, b, h, q, k: cap * torch.tanh(score / cap)


def gelu_score(score, b, h, q, k):
    return score * 0.5 * (1.0 + torch.erf(score * 0.70710678))


def configs():
    """(name, B, Hq, Hkv, T, D, dtype, mask_mod, score_mod, sdpa): sdpa is None, "dense" or
    "causal" (the configs SDPA can express)."""
    gen = torch.Generator().manual_seed(0)
    bf, fp = torch.bfloat16, torch.float16
    base = (4, 16, 16, 4096, 128)
    long = (1, 16, 16, 32768, 128)
    d64 = (8, 16, 16, 4096, 64)
    return [
        ("dense", *base, bf, None, None, "dense"),
        ("causal", *base, bf, causal, None, "causal"),
        ("sliding_window_1024", *base, bf, causal_window(1024), None, None),
        ("sink4_window1024", *base, bf, sink_window(4, 1024), None, None),
        ("alibi_causal", *base, bf, causal, alibi(16), None),
        ("softcap50_causal", *base, bf, causal, softcap(50.0), None),
        ("gelu_score_causal", *base, bf, causal, gelu_score, None),
        ("prefix_lm_1024", *base, bf, prefix_lm(1024), None, None),
        ("document_8docs", *base, bf, documents(4096, 8, gen), None, None),
        ("topk8_blk128_causal", *base, bf, topk_blocks(4096, 128, 8, gen), None, None),
        ("neighbourhood_2d_r7", *base, bf, neighbourhood_2d(64, 7), None, None),
        ("causal_d64", *d64, bf, causal, None, "causal"),
        ("causal_gqa_32q_8kv", 2, 32, 8, 4096, 128, bf, causal, None, "causal"),
        ("causal_T32k", *long, bf, causal, None, "causal"),
        ("window1024_T32k", *long, bf, causal_window(1024), None, None),
        ("dense_T512_B32", 32, 16, 16, 512, 128, bf, None, None, "dense"),
        ("causal_fp16", *base, fp, causal, None, "causal"),
        ("causal_d64_fp16", *d64, fp, causal, None, "causal"),
        ("document_8docs_T32k", *long, bf, documents(32768, 8, gen), None, None),
        ("dense_d64", *d64, bf, None, None, "dense"),
        ("dense_d256", 4, 16, 16, 4096, 256, bf, None, None, "dense"),
        ("causal_d256", 4, 16, 16, 4096, 256, bf, causal, None, "causal"),
    ]


def count_pairs(mask_mod, T):
    """Unmasked (q, kv) pairs of one (batch entry, head): the mask evaluated on every pair, in
    row chunks. All masks here are the same for every batch entry and head."""
    if mask_mod is None:
        return T * T
    zero = torch.zeros((), dtype=torch.int64, device=DEV)
    kv = torch.arange(T, device=DEV)[None, :]
    total = 0
    for s in range(0, T, 1024):
        q = torch.arange(s, min(T, s + 1024), device=DEV)[:, None]
        total += int(mask_mod(zero, zero, q, kv).sum())
    return total


def median_ms(fn):
    return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")


# The rates a row can report, amount / ms / 1e9: TF/s of FLOPs (prefill), TB/s of bytes (decode).
RATES = {"tflops": ("TF/s", "6.1f"), "tbps": ("TB/s", "6.2f")}


def record(rows, shape, system, fn, rate, amount, **extra):
    """Times fn (its first call, then the do_bench median) and appends the row, with
    rate = amount / time (a key of RATES); a backend that refuses the shape leaves an error row."""
    try:
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        first = time.perf_counter() - t0
        ms = median_ms(fn)
        row = dict(shape, sys=system, ms=ms, first_call_s=first, **{rate: amount / ms / 1e9}, **extra)
    except Exception as e:  # recorded; the others still run
        row = dict(shape, sys=system, error=f"{type(e).__name__}: {str(e)[:200]}")
    rows.append(row)
    unit, spec = RATES[rate]
    figures = f"{row['ms']:8.3f} ms {row[rate]:{spec}} {unit}" if "ms" in row else row["error"]
    print(f"{shape['cfg']:26s} {system:16s} {figures}", flush=True)


def prefill_inputs(cfg, Dv=None, **kind):
    """Random q, k, v of a prefill config and its row's shape fields (with the pairs its FLOPs
    count); v of Dv columns where given (MLA_CONFIGS)."""
    name, B, Hq, Hkv, T, D, dtype, mask_mod, _, _ = cfg
    q = torch.randn(B, Hq, T, D, device=DEV, dtype=dtype)
    k = torch.randn(B, Hkv, T, D, device=DEV, dtype=dtype)
    v = torch.randn(B, Hkv, T, Dv or D, device=DEV, dtype=dtype)
    pairs = count_pairs(mask_mod, T) * B * Hq
    shape = dict(cfg=name, **kind, B=B, Hq=Hq, Hkv=Hkv, T=T, D=D, **({"Dv": Dv} if Dv else {}),
                 dtype=DTYPE_NAMES[dtype], pairs=pairs, density=pairs / (B * Hq * T * T))
    return q, k, v, shape


def run(cfg, rows, Dv=None):
    name, B, Hq, Hkv, T, D, dtype, mask_mod, score_mod, sdpa = cfg
    q, k, v, shape = prefill_inputs(cfg, Dv)
    flop = 2 * (D + (Dv or D)) * shape["pairs"]  # QK^T over D, PV over Dv
    gqa = Hq != Hkv

    block_mask, mask_ms = None, None
    if mask_mod is not None:
        make = lambda: create_block_mask(mask_mod, None, None, T, T, device=DEV)
        block_mask = make()
        mask_ms = median_ms(make)
    record(rows, shape, "flex", lambda: flex(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=gqa),
           "tflops", flop, block_mask_ms=mask_ms)
    if flex_autotune is not None and (mask_mod is not None or score_mod is not None):
        record(rows, shape, "flex_autotune",
               lambda: flex_autotune(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=gqa),
               "tflops", flop)
    if flexjit_attention is not None:
        record(rows, shape, "flexjit.torch",
               lambda: flexjit_attention(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=gqa),
               "tflops", flop)
    if sdpa is not None:
        for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
            with sdpa_kernel([backend]):  # only this backend, or the call fails
                record(rows, shape, str(backend).split(".")[-1],
                       lambda: F.scaled_dot_product_attention(q, k, v, is_causal=sdpa == "causal", enable_gqa=gqa),
                       "tflops", flop)
    del q, k, v, block_mask
    torch.cuda.empty_cache()


# Multi-head latent attention's prefill (attn_bench's mla_* configs): prefill configs whose q and
# k have 192 columns, v and out 128 (the second field); run by `run` with that Dv.
MLA_CONFIGS = [(("mla_causal_d192v128", 4, 16, 16, 4096, 192, torch.bfloat16, causal, None, "causal"), 128),
               (("mla_dense_d192v128", 4, 16, 16, 4096, 192, torch.bfloat16, None, None, "dense"), 128)]


# Forward + backward: the mission's masks at B = 4, H = 16, T = 4096, D = 128, causal at D = 64,
# dense and causal at D = 256 and the MLA configs (attn_bench's fwdbwd_configs names the same),
# each a copy of its prefill config under the prefix.
FWDBWD_PREFIX = "fwdbwd_"
FWDBWD_OF = ("dense", "causal", "sliding_window_1024", "sink4_window1024", "alibi_causal", "softcap50_causal",
             "prefix_lm_1024", "document_8docs", "topk8_blk128_causal", "causal_d64", "dense_d256", "causal_d256",
             "gelu_score_causal")


def fwdbwd_configs(prefill):
    return [(FWDBWD_PREFIX + c[0], *c[1:]) for c in prefill if c[0] in FWDBWD_OF]


def fwdbwd_mla_configs():
    """The MLA configs under the prefix, each with its Dv."""
    return [((FWDBWD_PREFIX + c[0], *c[1:]), dv) for c, dv in MLA_CONFIGS]


def run_fwdbwd(cfg, rows, Dv=None):
    """Forward + backward of flex and of the SDPA backends that take the config, through autograd;
    v, out and dout of Dv columns where given (MLA_CONFIGS)."""
    name, B, Hq, Hkv, T, D, dtype, mask_mod, score_mod, sdpa = cfg
    q, k, v, shape = prefill_inputs(cfg, Dv, kind="fwdbwd")
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    dout = torch.randn(B, Hq, T, Dv or D, device=DEV, dtype=dtype)
    flop = 3.5 * 2 * (D + (Dv or D)) * shape["pairs"]  # the forward's QK^T over D and PV over Dv
    gqa = Hq != Hkv
    block_mask = None if mask_mod is None else create_block_mask(mask_mod, None, None, T, T, device=DEV)

    def step(attend):
        def fn():
            for t in (q, k, v):
                t.grad = None  # each step writes fresh gradients, as a training step's first use does
            attend().backward(dout)
        return fn

    record(rows, shape, "flex", step(lambda: flex(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=gqa)),
           "tflops", flop)
    if flex_autotune is not None and (mask_mod is not None or score_mod is not None):
        record(rows, shape, "flex_autotune",
               step(lambda: flex_autotune(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=gqa)),
               "tflops", flop)
    if flexjit_attention is not None:
        # A value head dim of its own runs on the Hopper backward's split form, which runs only where named.
        options = {"backward_family": "sm90_bwd"} if v.shape[-1] != q.shape[-1] else None
        record(rows, shape, "flexjit.torch",
               step(lambda: flexjit_attention(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=gqa,
                                              kernel_options=options)),
               "tflops", flop)
    if sdpa is not None:
        for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
            with sdpa_kernel([backend]):  # only this backend, or the call fails
                record(rows, shape, str(backend).split(".")[-1],
                       step(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=sdpa == "causal",
                                                                   enable_gqa=gqa)), "tflops", flop)
    del q, k, v, dout, block_mask
    torch.cuda.empty_cache()


# Decode: 32 query heads over 8 kv heads, D = 128, bf16 (bench/attn_bench.cpp, decode_configs).
PAGED_SUFFIX = "_paged64"  # attn_bench's paged twin of each decode config


def ragged_lengths(B, max_len):
    """Sequence lengths in [1, max_len], drawn by the LCG of document_cuts so that
    bench/attn_bench.cpp (ragged_lengths) draws the same ones."""
    x, lens = 0, []
    for _ in range(B):
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        lens.append(1 + (x >> 33) % max_len)
    return lens


def decode_configs():
    """(name, B, KV, lens): lens[b] keys of sequence b, in a cache padded to KV keys."""
    return [
        ("decode_b8_kv65536", 8, 65536, [65536] * 8),
        ("decode_b64_kv4096", 64, 4096, [4096] * 64),
        ("decode_b1_kv131072", 1, 131072, [131072]),
        ("decode_b8_ragged65536", 8, 65536, ragged_lengths(8, 65536)),
    ]


def run_decode(cfg, rows):
    name, B, KV, lens = cfg
    Hq, Hkv, D, dtype = 32, 8, 128, torch.bfloat16
    ragged = any(n != KV for n in lens)
    q = torch.randn(B, Hq, 1, D, device=DEV, dtype=dtype)
    k = torch.randn(B, Hkv, KV, D, device=DEV, dtype=dtype)
    v = torch.randn(B, Hkv, KV, D, device=DEV, dtype=dtype)
    keys = sum(lens)
    nbytes = dtype.itemsize * (2 * keys * Hkv * D + 2 * B * Hq * D)
    shape = dict(cfg=name, kind="decode", B=B, Hq=Hq, Hkv=Hkv, Tq=1, kv_len=KV, D=D, dtype=DTYPE_NAMES[dtype],
                 kv_keys=keys, pairs=keys * Hq, bytes=nbytes)

    block_mask, mask_ms = None, None  # no block mask: every key of a full-length cache is kept
    if ragged:
        lengths = torch.tensor(lens, device=DEV)
        within = lambda b, h, q_idx, kv_idx: kv_idx < lengths[b]
        make = lambda: create_block_mask(within, B, None, 1, KV, device=DEV)
        block_mask = make()
        mask_ms = median_ms(make)
    record(rows, shape, "flex", lambda: flex(q, k, v, block_mask=block_mask, enable_gqa=True), "tbps", nbytes,
           block_mask_ms=mask_ms)
    if not ragged:  # SDPA's FA2 and cuDNN backends take no per-sequence length
        for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
            system = str(backend).split(".")[-1]
            with sdpa_kernel([backend]):
                record(rows, shape, system, lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                       "tbps", nbytes)
                if "error" in rows[-1]:
                    # A backend that refuses GQA gets k and v with their heads repeated: it then reads
                    # Hq / Hkv times the bytes credited to it, and its row says so.
                    kx, vx = (t.repeat_interleave(Hq // Hkv, dim=1) for t in (k, v))
                    record(rows, shape, system, lambda: F.scaled_dot_product_attention(q, kx, vx), "tbps", nbytes,
                           kv_heads_expanded=True, gqa_error=rows[-1]["error"])
                    del kx, vx
    del q, k, v, block_mask
    torch.cuda.empty_cache()


def matches(pattern, name):
    """--only's NAME: a config's name, or with a trailing * the start of names."""
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else name == pattern


CHUNK_PREFIX = "prefill_chunk"  # attn_bench's chunked-prefill configs


def run_chunk(cfg, rows):
    """A chunk of new tokens (the last Tq of each sequence of Tkv keys) as a plain call: q [B, Hq,
    Tq, D] against k, v [B, Hkv, Tkv, D], causal with the rows placed at Tkv - Tq. FlexAttention
    takes it with a block mask of that shape (SDPA's is_causal aligns the rows to the top, so it
    does not run); attn_bench's *_forward twin is the same call. Its paged twins have no peer here:
    FlexAttention's paged form is not in its core API."""
    name, B, Hq, Hkv, Tq, Tkv, D, dtype = cfg
    q = torch.randn(B, Hq, Tq, D, device=DEV, dtype=dtype)
    k, v = (torch.randn(B, Hkv, Tkv, D, device=DEV, dtype=dtype) for _ in range(2))
    start = Tkv - Tq

    def chunk_causal(b, h, qi, ki):
        return ki <= qi + start

    block_mask = create_block_mask(chunk_causal, None, None, Tq, Tkv, device=DEV)
    pairs = (Tq * start + Tq * (Tq + 1) // 2) * B * Hq
    shape = dict(cfg=name, kind="prefill_chunk", B=B, Hq=Hq, Hkv=Hkv, T=Tkv, Tq=Tq, D=D, dtype=DTYPE_NAMES[dtype],
                 pairs=pairs)
    record(rows, shape, "flex", lambda: flex(q, k, v, block_mask=block_mask, enable_gqa=Hq != Hkv), "tflops",
           4 * D * pairs)
    del q, k, v, block_mask
    torch.cuda.empty_cache()


def chunk_twin(name):
    """The plain-forward config of an attn_bench chunk config: its name without the layout suffix
    (and the _qoffset of the twin placed by q_offset), then _forward."""
    return name.split("_paged")[0].removesuffix("_forward").removesuffix("_qoffset") + "_forward"


# Token-level selection (attn_bench's token_configs): (name, B, Hq, Hkv, T, D, dtype, K, seed), one
# sequence and one kv head, so that list i is query i's (bench/token_lists.hpp numbers the lists
# by sequence, kv head, then query row).
TOKEN_CONFIGS = [("tokens_prefill_k2048_t8192", 1, 16, 1, 8192, 128, torch.bfloat16, 2048, 1)]
TOKENS_WITHOUT_PEER = ("tokens_decode_k2048_b64_kv32768_paged64", "tokens_mla_prefill_k2048_t32768_h128",
                       "tokens_mla_decode_k2048_b64_kv32768_h128_paged64")
MLA_DECODE_PREFIX = "decode_mla"  # attn_bench's MLA decode configs: no peer (see the top of this file)


def token_rank(np, seed, lists, keys):
    """bench/token_lists.hpp's token_rank (splitmix64 of (seed, list, key)) on numpy uint64 arrays,
    whose arithmetic wraps modulo 2**64 as C++'s does (scalars stay np.uint64: a Python int would
    turn the arrays into float64)."""
    u = np.uint64
    z = (lists << u(32)) + keys + u(seed * 0x9E3779B97F4A7C15 % 2**64)
    z = (z ^ (z >> u(30))) * u(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> u(27))) * u(0x94D049BB133111EB)
    return z ^ (z >> u(31))


def listed_causal_mask(T, K, seed, chunk=256):
    """[T, T] bool, True where query i's list names key j: every key j <= i where i + 1 <= K, else
    the K keys of [0, i] of lowest rank (bench::causal_token_lists, list i)."""
    import numpy as np  # here rather than at the top: only these configs need it
    listed = np.tril(np.ones((T, T), dtype=bool))
    keys = np.arange(T, dtype=np.uint64)[None, :]
    for start in range(K, T, chunk):
        rows = np.arange(start, min(T, start + chunk), dtype=np.uint64)[:, None]
        rank = token_rank(np, seed, rows, keys)
        rank[keys > rows] = np.iinfo(np.uint64).max  # after the query: never among its K lowest of i + 1 > K
        lowest = np.argpartition(rank, K - 1, axis=1)[:, :K]
        block = np.zeros(rank.shape, dtype=bool)
        np.put_along_axis(block, lowest, True, axis=1)
        listed[start:start + len(rows)] = block
    return torch.from_numpy(listed)


def run_tokens(cfg, rows):
    """FlexAttention on the keys the lists name (see the top of this file). No flexjit.torch row:
    the drop-in would run this dense mask, not the token lists attn_bench times."""
    name, B, Hq, Hkv, T, D, dtype, K, seed = cfg
    listed = listed_causal_mask(T, K, seed).to(DEV)

    def listed_mask(b, h, q_idx, kv_idx):
        return listed[q_idx, kv_idx]

    q, k, v, shape = prefill_inputs((name, B, Hq, Hkv, T, D, dtype, listed_mask, None, None), kind="tokens")
    # The K and V rows each list names, once per (sequence, kv head, query): attn_bench's count.
    shape.update(Tq=T, kv_len=T, K=K, bytes=int(listed.sum()) * B * Hkv * 2 * D * dtype.itemsize)
    make = lambda: create_block_mask(listed_mask, B, None, T, T, device=DEV)
    block_mask = make()
    mask_ms = median_ms(make)
    flop = 4 * D * shape["pairs"]
    record(rows, shape, "flex", lambda: flex(q, k, v, block_mask=block_mask, enable_gqa=Hq != Hkv), "tflops", flop,
           block_mask_ms=mask_ms)
    if flex_autotune is not None:
        record(rows, shape, "flex_autotune",
               lambda: flex_autotune(q, k, v, block_mask=block_mask, enable_gqa=Hq != Hkv), "tflops", flop)
    del q, k, v, listed, block_mask
    torch.cuda.empty_cache()


# attn_bench's prefill_chunk*_forward configs: (name, B, Hq, Hkv, Tq, Tkv, D, dtype).
CHUNK_CONFIGS = [("prefill_chunk2048_kv8192_forward", 4, 32, 8, 2048, 8192, 128, torch.bfloat16)]

# The host's cost per call (see the top of this file).
HOST_OVERHEAD = ("host_overhead",)
HOST_CALLS = 2000


def run_host_overhead(cfg, rows):
    q, k, v = (torch.randn(1, 1, 128, 64, device=DEV, dtype=torch.bfloat16) for _ in range(3))
    block_mask = create_block_mask(causal, None, None, 128, 128, device=DEV)
    systems = [("flex", lambda: flex(q, k, v, block_mask=block_mask))]
    if flexjit_attention is not None:
        systems.append(("flexjit.torch", lambda: flexjit_attention(q, k, v, block_mask=block_mask)))
    for system, fn in systems:
        try:
            for _ in range(50):
                fn()
            torch.cuda.synchronize()
            loops = []
            for _ in range(3):
                t0 = time.perf_counter()
                for _ in range(HOST_CALLS):
                    fn()
                torch.cuda.synchronize()
                loops.append((time.perf_counter() - t0) / HOST_CALLS * 1e6)
            row = dict(cfg=cfg[0], sys=system, us_per_call=sorted(loops)[1], calls=HOST_CALLS)
            figures = f"{row['us_per_call']:8.1f} us per call"
        except Exception as e:  # recorded; the other system still runs
            row = dict(cfg=cfg[0], sys=system, error=f"{type(e).__name__}: {str(e)[:200]}")
            figures = row["error"]
        rows.append(row)
        print(f"{cfg[0]:26s} {system:16s} {figures}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--only", help="comma-separated config names")
    ap.add_argument("--autotune", action="store_true", help="also FlexAttention with max-autotune-no-cudagraphs")
    args = ap.parse_args()
    if args.autotune:
        global flex_autotune
        flex_autotune = torch.compile(flex_attention, dynamic=False, mode="max-autotune-no-cudagraphs")
    prefill = configs()
    # Forward + backward last, as in attn_bench.
    cfgs = ([(run_host_overhead, HOST_OVERHEAD)] + [(run, c) for c in prefill]
            + [(functools.partial(run, Dv=dv), c) for c, dv in MLA_CONFIGS]
            + [(run_decode, c) for c in decode_configs()] + [(run_chunk, c) for c in CHUNK_CONFIGS]
            + [(run_tokens, c) for c in TOKEN_CONFIGS]
            + [(run_fwdbwd, c) for c in fwdbwd_configs(prefill)]
            + [(functools.partial(run_fwdbwd, Dv=dv), c) for c, dv in fwdbwd_mla_configs()])
    if args.only:
        names = [n for n in args.only.split(",") if n and not n.startswith(MLA_DECODE_PREFIX)]  # no peer
        # A paged decode config is timed on its contiguous twin (see the top of this file).
        wanted = {n[: -len(PAGED_SUFFIX)] if n.startswith("decode_") and n.endswith(PAGED_SUFFIX) else n
                  for n in names}
        # attn_bench's chunk configs (cached or plain) are timed here as the plain one; those whose
        # plain twin is not a config here (the 63 / 64-token pair around the chunk kernel's
        # threshold) have no peer.
        chunk_names = {c[0] for c in CHUNK_CONFIGS}
        wanted = {chunk_twin(w) if w.startswith(CHUNK_PREFIX) and not w.endswith("*") else w for w in wanted}
        wanted = {w for w in wanted if not w.startswith(CHUNK_PREFIX) or w.endswith("*") or w in chunk_names}
        wanted -= set(TOKENS_WITHOUT_PEER)  # see the top of this file
        unknown = {w for w in wanted if not any(matches(w, c[0]) for _, c in cfgs)}
        if unknown:
            sys.exit(f"peers.py: unknown config(s): {', '.join(sorted(unknown))}")
        cfgs = [(fn, c) for fn, c in cfgs if any(matches(w, c[0]) for w in wanted)]
    print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}", flush=True)
    meta = dict(torch=torch.__version__, triton=triton.__version__, device=torch.cuda.get_device_name())
    rows = []
    for fn, cfg in cfgs:
        try:
            fn(cfg, rows)
        except Exception as e:  # e.g. create_block_mask failing: the other configs still run
            rows.append(dict(cfg=cfg[0], sys="flex", error=f"{type(e).__name__}: {str(e)[:200]}"))
            print(f"{cfg[0]:26s} failed: {rows[-1]['error']}", flush=True)
        if args.json:  # after every config, so that a run cut short still leaves its figures
            with open(args.json, "w") as f:
                json.dump(dict(meta=meta, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
