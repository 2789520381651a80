def band(b, h, q_idx, kv_idx, *widths):
    return q_idx - kv_idx < 4

mask_mod = band
