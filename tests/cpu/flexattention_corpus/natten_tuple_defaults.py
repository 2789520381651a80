def generate_neighbourhood(canvas=(8, 12), kernel=(3, 5)):
    height, width = canvas
    kernel_h, kernel_w = kernel

    def mask(b, h, q_idx, kv_idx):
        q_row, q_col = divmod(q_idx, width)
        kv_row, kv_col = divmod(kv_idx, width)
        return ((q_row - kv_row).abs() <= kernel_h // 2) & ((q_col - kv_col).abs() <= kernel_w // 2)

    mask.__name__ = f"neighbourhood_{height}x{width}"
    return mask


mask_mod = generate_neighbourhood(kernel=(5, 3))
