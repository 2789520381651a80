def mask_mod(b, h, q_idx, kv_idx):
    qx, qy = q_idx
    return qx >= kv_idx
