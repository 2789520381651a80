import torch
from torch.nn.attention.flex_attention import and_masks

WINDOW = 28.0


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def within(b, h, q_idx, kv_idx):
    # the window written as a float, as configuration files often give it
    return q_idx - kv_idx < WINDOW


mask_mod = and_masks(causal, within)
