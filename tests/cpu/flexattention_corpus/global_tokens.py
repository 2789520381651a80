from functools import partial

from torch.nn.attention.flex_attention import or_masks


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def global_tokens(b, h, q_idx, kv_idx, num_global=4):
    """The first num_global tokens see everything and are seen by everyone."""
    return (kv_idx < num_global) | (q_idx < num_global)


mask_mod = or_masks(causal, partial(global_tokens, num_global=6))
