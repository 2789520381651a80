offset: Tensor[int32, 0]

def mask_mod(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx + offset.item()
