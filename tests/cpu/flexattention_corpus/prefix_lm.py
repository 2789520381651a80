from torch.nn.attention.flex_attention import _mask_mod_signature, or_masks


def causal_mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def generate_prefix_lm_mask(prefix_length: int) -> _mask_mod_signature:
    def prefix_mask(b, h, q_idx, kv_idx):
        return kv_idx < prefix_length

    prefix_lm_causal_mask = or_masks(prefix_mask, causal_mask)
    prefix_lm_causal_mask.__name__ = f"prefix_lm_causal_mask_{prefix_length}"
    return prefix_lm_causal_mask


mask_mod = generate_prefix_lm_mask(prefix_length=10)
