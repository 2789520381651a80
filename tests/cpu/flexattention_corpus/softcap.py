import torch
from torch.nn.attention.flex_attention import _score_mod_signature


def generate_tanh_softcap(soft_cap: int, approx: bool = False) -> _score_mod_signature:
    """Soft-capping as in Gemma 2: soft_cap * tanh(score / soft_cap)."""
    tanh = torch.tanh

    def tanh_softcap(score, b, h, q_idx, kv_idx):
        return soft_cap * tanh(score / soft_cap)

    prefix = "tanh_softcap_approx" if approx else "tanh_softcap"
    tanh_softcap.__name__ = f"{prefix}_{soft_cap}"
    return tanh_softcap


score_mod = generate_tanh_softcap(30, approx=False)
