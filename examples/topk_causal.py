# Block-sparse top-k (NSA / DeepSeek sparse attention style): each 64-query block attends to
# the 64-key blocks listed in `selected` (an int32 tensor [B, H, ceil(Tq / 64), K], -1 = none),
# and inside them the element mask still applies.
selected: BlockIndices[64, 64]

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
