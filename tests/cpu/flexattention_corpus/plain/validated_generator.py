def mask_mod(b, h, q_idx, kv_idx):
    return kv_idx % 5 == 2 or q_idx == kv_idx
