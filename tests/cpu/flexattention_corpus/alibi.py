import torch
from torch.nn.attention.flex_attention import _score_mod_signature


def generate_alibi_bias(H: int) -> _score_mod_signature:
    """ALiBi with the slopes of the paper: 2 ** (-8 * (h + 1) / H)."""

    def alibi_mod(score, b, h, q_idx, kv_idx):
        scale = torch.exp2(-((h + 1) * 8.0 / H))
        bias = (kv_idx - q_idx) * scale
        return score + bias

    return alibi_mod


score_mod = generate_alibi_bias(16)


def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
