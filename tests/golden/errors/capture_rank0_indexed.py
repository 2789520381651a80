offset: Tensor[int64, 0]

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offset[0] >= kv_idx
