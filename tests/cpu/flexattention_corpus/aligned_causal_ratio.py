from torch.nn.attention.flex_attention import _mask_mod_signature

Q_LEN = 67
KV_LEN = 90


def generate_aligned_causal(q_len: int, kv_len: int) -> _mask_mod_signature:
    # causal across sequences of different lengths: query i sees the keys up to its place in kv
    ratio = kv_len / q_len

    def aligned_causal(b, h, q_idx, kv_idx):
        return kv_idx <= q_idx * ratio

    aligned_causal.__name__ = f"aligned_causal_{q_len}_{kv_len}"
    return aligned_causal


mask_mod = generate_aligned_causal(Q_LEN, KV_LEN)
