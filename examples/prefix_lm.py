# Prefix-LM: bidirectional attention over each sequence's prefix, causal after it.
# The prefix length is per batch entry.
prefix_len: Tensor[int32, 1]

def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx < prefix_len[b]) | (q_idx >= kv_idx)
