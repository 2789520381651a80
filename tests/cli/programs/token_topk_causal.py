# Token-level top-k (DeepSeek sparse attention): each query row attends only to the keys its
# indexer listed in `selected` (int32 [B, H, Tq, K], -1 unused), causally.
selected: TokenIndices

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
