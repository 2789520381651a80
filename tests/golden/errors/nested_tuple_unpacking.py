def mask_mod(b, h, q_idx, kv_idx):
    (qy, qx), kx = divmod(q_idx, 8), kv_idx % 8
    return (qy >= 0) & (qx == kx)
