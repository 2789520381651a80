def sliding_window(w):
    assert w % 16 == 0, f"window {w} must be a multiple of 16"
    def mask(b, h, q_idx, kv_idx):
        return q_idx - kv_idx < w
    return mask

mask_mod = sliding_window(100)
