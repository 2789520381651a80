# Test program: a causal window whose size is per query head, read from a tensor, so the block
# mask differs per head (one map per head).
head_window: Tensor[int32, 1]

def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < head_window[h])
