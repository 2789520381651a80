is_image: Tensor[bool, 1]
image_id: Tensor[int32, 1]


def mask_mod(b, h, q_idx, kv_idx):
    text_causal = not is_image[kv_idx] and q_idx >= kv_idx
    same_image = is_image[q_idx] and is_image[kv_idx] and image_id[q_idx] == image_id[kv_idx]
    image_prefix = not is_image[q_idx] and is_image[kv_idx] and kv_idx <= q_idx
    return text_causal or same_image or image_prefix
