selected: BlockIndices[64, 64]

def mask_mod(b, h, q_idx, kv_idx):
    return selected > 0
