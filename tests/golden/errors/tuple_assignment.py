def mask_mod(b, h, q_idx, kv_idx):
    q, *k = q_idx, kv_idx
    return q >= k
