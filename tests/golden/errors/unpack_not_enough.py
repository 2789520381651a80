def mask_mod(b, h, q_idx, kv_idx):
    qx, qy, qz = divmod(q_idx, 8)
    return qx >= kv_idx
