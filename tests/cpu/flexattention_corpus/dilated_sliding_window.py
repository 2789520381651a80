from torch.nn.attention.flex_attention import and_masks


def generate_dilated_sliding_window(window_size: int, dilation: int):
    assert window_size > 0 and dilation > 0, "window and dilation must be positive"

    def dilated_sliding_window(b, h, q_idx, kv_idx):
        diff = torch.abs(q_idx - kv_idx)
        in_window = diff <= window_size * dilation
        is_dilated = (diff % dilation) == 0
        return in_window & is_dilated

    dilated_sliding_window.__name__ = f"dilated_sliding_window_{window_size}_dilation_{dilation}"
    return dilated_sliding_window


mask_mod = generate_dilated_sliding_window(window_size=4, dilation=3)
