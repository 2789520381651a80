from torch.nn.attention.flex_attention import _mask_mod_signature, and_masks


def causal_mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def generate_sliding_window(window_size: int) -> _mask_mod_signature:
    """Every query sees itself and the window_size - 1 keys before it."""

    def sliding_window(b, h, q_idx, kv_idx):
        return q_idx - kv_idx <= window_size

    sliding_window_mask = and_masks(sliding_window, causal_mask)
    sliding_window_mask.__name__ = f"sliding_window_{window_size}"
    return sliding_window_mask


mask_mod = generate_sliding_window(window_size=24)
