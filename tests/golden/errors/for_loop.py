def mask_mod(b, h, q_idx, kv_idx):
    for i in range(4):
        pass
    return True
