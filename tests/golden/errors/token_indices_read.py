selected: TokenIndices

def mask_mod(b, h, q_idx, kv_idx):
    return selected[b, h, q_idx, 0] == kv_idx
