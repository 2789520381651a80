from functools import lru_cache

from torch.nn.attention.flex_attention import and_masks


@lru_cache
def make_causal():
    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    return causal


@lru_cache(maxsize=None)
def make_window(size: int):
    def window(b, h, q_idx, kv_idx):
        return q_idx - kv_idx < size

    window.__name__ = f"window_{size}"
    return window


mask_mod = and_masks(make_causal(), make_window(20))
