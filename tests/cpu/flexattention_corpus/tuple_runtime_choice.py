window: int


def bounds(q_idx):
    # early queries look back further; the pair is chosen at run time
    lo, hi = (0, 2 * window) if q_idx < 32 else (0, window)
    return lo, hi


def mask_mod(b, h, q_idx, kv_idx):
    lo, hi = bounds(q_idx)
    d = q_idx - kv_idx
    return (d >= lo) & (d < hi)
