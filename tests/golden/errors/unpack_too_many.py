def mask_mod(b, h, q_idx, kv_idx):
    qx, qy = divmod(q_idx, 8), 1, 2
    return qx >= kv_idx
