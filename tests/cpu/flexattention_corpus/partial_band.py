import functools


def band(b, h, q_idx, kv_idx, lower, upper):
    return (q_idx - kv_idx >= lower) & (q_idx - kv_idx <= upper)


mask_mod = functools.partial(band, lower=-3, upper=12)
