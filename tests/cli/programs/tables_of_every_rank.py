# Captured tensors of ranks 1 to 4, each dimension indexed by a different kind of expression: for
# `flexjit run --demo`, which sizes each dimension from the indices that read it.
bias: Tensor[float32, 3]      # [H, Tq, Tkv]
table: Tensor[float32, 2]     # [H, 2 * 128 + 1]: a clipped relative position
doc: Tensor[int32, 1]         # [T]
grid: Tensor[float32, 4]      # [B, H, 8, Tkv // 512 + 1]


def score_mod(score, b, h, q_idx, kv_idx):
    d = min(max(kv_idx - q_idx, -128), 128)
    return score + bias[h, q_idx, kv_idx] + table[h, d + 128] + grid[b, h, q_idx % 8, kv_idx // 512]


def mask_mod(b, h, q_idx, kv_idx):
    return doc[q_idx] == doc[kv_idx]
