def mask_mod(b, h, q_idx, kv_idx):
    kernel_x = clamp(q_idx // 10, 1, 9 - 1)
    kernel_y = clamp(q_idx % 10, 2, 8 - 2)
    return abs(kernel_x - kv_idx // 10) <= 1 and abs(kernel_y - kv_idx % 10) <= 2
