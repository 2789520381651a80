def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def mask_mod(b, h, q_idx, kv_idx):
    # the future and the diagonal: the complement of the strictly causal mask
    return ~causal(b, h, q_idx, kv_idx) | (q_idx == kv_idx)
