from torch.nn.attention.flex_attention import _mask_mod_signature


def generate_natten(canvas_w: int, canvas_h: int, kernel_w: int, kernel_h: int) -> _mask_mod_signature:
    """Neighbourhood attention on a canvas_h x canvas_w image flattened row by row."""

    def get_x_y(idx):
        return idx // canvas_w, idx % canvas_w

    def natten_mask_mod(b, h, q_idx, kv_idx):
        q_x, q_y = get_x_y(q_idx)
        kv_x, kv_y = get_x_y(kv_idx)
        # kernel nominally attempts to center itself on the query, but kernel center
        # is clamped to a fixed distance (kernel half-length) from the canvas edge
        kernel_x = q_x.clamp(kernel_w // 2, (canvas_w - 1) - kernel_w // 2)
        kernel_y = q_y.clamp(kernel_h // 2, (canvas_h - 1) - kernel_h // 2)
        hori_mask = (kernel_x - kv_x).abs() <= kernel_w // 2
        vert_mask = (kernel_y - kv_y).abs() <= kernel_h // 2
        return hori_mask & vert_mask

    natten_mask_mod.__name__ = f"natten_c{canvas_w}x{canvas_h}_k{kernel_w}x{kernel_h}"
    return natten_mask_mod


mask_mod = generate_natten(canvas_w=10, canvas_h=9, kernel_w=3, kernel_h=5)
