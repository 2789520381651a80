from torch.nn.attention.flex_attention import *


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sink_tokens(b, h, q_idx, kv_idx):
    return kv_idx < 4


mask_mod = and_masks(or_masks(causal, sink_tokens), noop_mask)
