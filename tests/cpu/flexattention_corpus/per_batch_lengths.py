import torch

seq_lens: Tensor[int64, 1]


def padding_mask(b, h, q_idx, kv_idx):
    return (q_idx < seq_lens[b] * 20) & (kv_idx < seq_lens[b] * 20)


def mask_mod(b, h, q_idx, kv_idx):
    return padding_mask(b, h, q_idx, kv_idx) & (q_idx >= kv_idx)
