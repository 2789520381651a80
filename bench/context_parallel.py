"""Context parallelism on a machine with several NVIDIA GPUs: flexjit.torch.context_parallel_attention
(ring attention over NCCL, zigzag sharding) on causal and document masks at long sequence lengths,
against one GPU running the whole sequence with flexjit, and for causal against torch's own
context parallelism for SDPA (torch.distributed.tensor.experimental.context_parallel).

    torchrun --nproc-per-node 8 bench/context_parallel.py [--T 131072,262144,524288]
        [--masks causal,documents] [--heads 8] [--reps 5] [--json FILE]

bf16, B = 1, D = 128. Each rank makes its own share of q, k and v (the ring never needs the whole
sequence); the documents' ids cover the whole sequence on every rank (global positions). Times are
CUDA-event medians over --reps, the slowest rank's; TF/s count the (query, key) pairs the mask
keeps (4 * D flops a pair forward, 3.5 times that forward + backward, FlashAttention's way).
Per-GPU TF/s is the ring's TF/s over the number of GPUs; "of one GPU" sets it against flexjit's
kernel on the whole sequence on one GPU (rank 0, the others waiting), the issue's bar being 85% at
8 GPUs. "skipped" counts the ring's (query chunk, key shard) calls that the mask proves empty
(Kernel.may_keep_any) and so never run. Needs PyTorch with NCCL and the flexjit package
(PYTHONPATH=<build>/python)."""

import argparse
import json
import os
import statistics

import torch
import torch.distributed as dist
import torch.nn.functional as F

import flexjit.torch as fj
from flexjit import _attention, ring

D = 128


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def document_ids(T, device, seed=0):
    """Documents of 8k-32k positions (seeded, the same on every rank), the last cut at T."""
    gen = torch.Generator().manual_seed(seed)
    lengths, total = [], 0
    while total < T:
        n = int(torch.randint(8192, 32769, (1,), generator=gen))
        lengths.append(min(n, T - total))
        total += lengths[-1]
    ids = torch.repeat_interleave(torch.arange(len(lengths), dtype=torch.int32), torch.tensor(lengths))
    return ids.to(device), lengths


def mask_and_pairs(name, T, H, device):
    """(mask_mod, (query, key) pairs it keeps over all heads)."""
    if name == "causal":
        return causal, H * T * (T + 1) // 2
    doc_ids, lengths = document_ids(T, device)

    def documents(b, h, q_idx, kv_idx):
        return (doc_ids[q_idx] == doc_ids[kv_idx]) & (q_idx >= kv_idx)

    return documents, H * sum(n * (n + 1) // 2 for n in lengths)


def median_ms(fn, reps, before_each=lambda: None):
    """Median ms of fn over reps after one warm-up, by CUDA events."""
    fn()
    times = []
    for _ in range(reps):
        before_each()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def timed(fn, reps):
    """Median ms of fn over reps, the ranks starting together, the slowest rank's."""
    slowest = torch.tensor([median_ms(fn, reps, dist.barrier)], device="cuda")
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return slowest.item()


def skipped_calls(mask_mod, T, world, H):
    """(calls the ring skips, calls it would make without the analysis), forward, over all ranks."""
    probe = torch.empty(1, H, T, D, dtype=torch.bfloat16, device="cuda")
    kernel, bind = _attention.prepare(probe, probe, probe, None, mask_mod, None, None)
    chunks = ring.shard_chunks(T, world, "zigzag")
    pairs = [(qa, qb, ka, kb) for rank in chunks for qa, qb in rank for shard in chunks for ka, kb in shard]
    skipped = sum(not kernel.may_keep_any(qb - qa, kb - ka, bind, q_offset=qa, kv_offset=ka) for qa, qb, ka, kb in pairs)
    return skipped, len(pairs)


def ours(mask_mod, T, H, reps, rank, world):
    local = T // world
    gen = torch.Generator(device="cuda").manual_seed(1000 + rank)
    q, k, v, dout = (torch.randn(1, H, local, D, generator=gen, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    for x in (q, k, v):
        x.requires_grad_()

    def forward():
        with torch.no_grad():
            fj.context_parallel_attention(q, k, v, mask_mod=mask_mod)

    def forward_backward():
        fj.context_parallel_attention(q, k, v, mask_mod=mask_mod).backward(dout)

    return timed(forward, reps), timed(forward_backward, reps)


def one_gpu(mask_mod, T, H, reps, rank):
    """flexjit on the whole sequence on rank 0 (the others wait at the barrier): fwd ms, fwd+bwd ms."""
    result = torch.zeros(2, device="cuda")
    if rank == 0:
        gen = torch.Generator(device="cuda").manual_seed(7)
        q, k, v, dout = (torch.randn(1, H, T, D, generator=gen, device="cuda", dtype=torch.bfloat16) for _ in range(4))
        for x in (q, k, v):
            x.requires_grad_()
        # flexjit reads a BlockMask's mask_mod alone; torch's create_block_mask would evaluate the mask
        # over (T / 128)^2 blocks, which is what flexjit's users are spared.
        block_mask = type("BlockMask", (), {"mask_mod": staticmethod(mask_mod)})()

        def forward():
            with torch.no_grad():
                fj.flex_attention(q, k, v, block_mask=block_mask)

        def forward_backward():
            fj.flex_attention(q, k, v, block_mask=block_mask).backward(dout)

        result = torch.tensor([median_ms(forward, reps), median_ms(forward_backward, reps)], device="cuda")
    dist.broadcast(result, 0)
    return result.tolist()


def torch_cp_sdpa(T, H, reps, world):
    """torch's context parallelism for causal SDPA: fwd ms, fwd+bwd ms, or the error's text."""
    try:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor.experimental import context_parallel

        mesh = init_device_mesh("cuda", (world,))
        gen = torch.Generator(device="cuda").manual_seed(7)
        q, k, v, dout = (torch.randn(1, H, T, D, generator=gen, device="cuda", dtype=torch.bfloat16) for _ in range(4))
        for x in (q, k, v):
            x.requires_grad_()
        with context_parallel(mesh, buffers=[q, k, v, dout], buffer_seq_dims=[2, 2, 2, 2]):
            def forward():
                with torch.no_grad():
                    F.scaled_dot_product_attention(q, k, v, is_causal=True)

            def forward_backward():
                F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(dout)

            return timed(forward, reps), timed(forward_backward, reps)
    except Exception as e:  # recorded as the row's error; ours still stand
        return f"{type(e).__name__}: {str(e)[:160]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--T", default="131072,262144,524288", help="comma-separated sequence lengths")
    ap.add_argument("--masks", default="causal,documents")
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", help="rank 0 writes the rows here")
    args = ap.parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    H, rows = args.heads, []
    try:
        for T in (int(t) for t in args.T.split(",")):
            if T % (2 * world):
                raise SystemExit(f"T = {T} does not cut into {2 * world} zigzag chunks")
            for name in args.masks.split(","):
                mask_mod, pairs = mask_and_pairs(name, T, H, "cuda")
                flops = 4 * D * pairs
                fwd, fwdbwd = ours(mask_mod, T, H, args.reps, rank, world)
                one_fwd, one_fwdbwd = one_gpu(mask_mod, T, H, args.reps, rank)
                skipped, calls = skipped_calls(mask_mod, T, world, H)
                row = dict(mask=name, T=T, H=H, world=world, fwd_ms=fwd, fwdbwd_ms=fwdbwd, one_gpu_fwd_ms=one_fwd,
                           one_gpu_fwdbwd_ms=one_fwdbwd, skipped_calls=skipped, calls=calls,
                           per_gpu_fwd_tfs=flops / fwd / 1e9 / world, per_gpu_fwdbwd_tfs=3.5 * flops / fwdbwd / 1e9 / world,
                           one_gpu_fwd_tfs=flops / one_fwd / 1e9, one_gpu_fwdbwd_tfs=3.5 * flops / one_fwdbwd / 1e9)
                if name == "causal":
                    peer = torch_cp_sdpa(T, H, args.reps, world)
                    if isinstance(peer, str):
                        row["sdpa_cp_error"] = peer
                    else:
                        row["sdpa_cp_fwd_ms"], row["sdpa_cp_fwdbwd_ms"] = peer
                rows.append(row)
                if rank == 0:
                    print(json.dumps(row), flush=True)
        if rank == 0:
            print(f"\n{world} GPUs, bf16, B = 1, H = {H}, D = {D}; per-GPU TF/s (x one GPU's), fwd | fwd+bwd")
            print("| mask | T | fwd ms | per GPU | x one GPU | fwd+bwd ms | per GPU | x one GPU | skipped | SDPA CP fwd / fwd+bwd ms |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            for r in rows:
                peer = r.get("sdpa_cp_error") or (f"{r['sdpa_cp_fwd_ms']:.2f} / {r['sdpa_cp_fwdbwd_ms']:.2f}"
                                                  if "sdpa_cp_fwd_ms" in r else "-")
                print(f"| {r['mask']} | {r['T']} | {r['fwd_ms']:.2f} | {r['per_gpu_fwd_tfs']:.1f} | "
                      f"{r['per_gpu_fwd_tfs'] / r['one_gpu_fwd_tfs']:.2f} | {r['fwdbwd_ms']:.2f} | "
                      f"{r['per_gpu_fwdbwd_tfs']:.1f} | {r['per_gpu_fwdbwd_tfs'] / r['one_gpu_fwdbwd_tfs']:.2f} | "
                      f"{r['skipped_calls']} of {r['calls']} | {peer} |")
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(rows, f, indent=1)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
