# An attention-gym style example file: the mask sits among the host-side code that builds inputs,
# a block mask and a benchmark. None of that is reached by the mod, so it is parsed and skipped.
import random
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

random.seed(0)
torch.manual_seed(0)
SEQ_LEN = 4096
lengths = [random.randint(64, 512) for _ in range(8)]
document_id = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))

doc_ids: Tensor[int32, 1]


def document_causal(b, h, q_idx, kv_idx):
    causal = q_idx >= kv_idx
    same_doc = doc_ids[q_idx] == doc_ids[kv_idx]
    return causal & same_doc


@lru_cache
def create_block_mask_cached(mask, B, H, M, N, device="cuda"):
    return create_block_mask(mask, B, H, M, N, device=device)


def benchmark(fn, *args, iters=10):
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        times.append(start)
    return sum(times) / len(times)


mask_mod = document_causal
block_mask = create_block_mask_cached(mask_mod, 1, 1, SEQ_LEN, SEQ_LEN)
q = torch.randn(1, 8, SEQ_LEN, 64, device="cuda", dtype=torch.float16)
print(f"sparsity: {block_mask.sparsity():.2f}")

if __name__ == "__main__":
    out = flex_attention(q, q, q, block_mask=block_mask)
