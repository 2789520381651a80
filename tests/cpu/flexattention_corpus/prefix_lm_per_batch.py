from torch import Tensor

prefix_lengths: Tensor[int32, 1]


def prefix_lm_causal(b, h, q_idx, kv_idx):
    return kv_idx < prefix_lengths[b] or q_idx >= kv_idx


mask_mod = prefix_lm_causal
