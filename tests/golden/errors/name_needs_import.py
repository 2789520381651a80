def band(b, h, q_idx, kv_idx, w):
    return q_idx - kv_idx < w

mask_mod = partial(band, w=4)
