import torch
from torch import Tensor
from torch.nn.attention.flex_attention import or_masks

is_image: Tensor[bool, 1]
image_id: Tensor[int32, 1]


def text_causal(b, h, q_idx, kv_idx):
    return ~is_image[kv_idx] & (q_idx >= kv_idx)


def same_image(b, h, q_idx, kv_idx):
    return is_image[q_idx] & is_image[kv_idx] & (image_id[q_idx] == image_id[kv_idx])


def image_prefix(b, h, q_idx, kv_idx):
    # text attends to every earlier image token
    return ~is_image[q_idx] & is_image[kv_idx] & (kv_idx <= q_idx)


mask_mod = or_masks(text_causal, same_image, image_prefix)
