CHUNK = 16


def chunked_causal(b, h, q_idx, kv_idx):
    q_chunk, _ = divmod(q_idx, CHUNK)
    kv_chunk, _ = divmod(kv_idx, CHUNK)
    return (q_chunk == kv_chunk) & (q_idx >= kv_idx)


mask_mod = chunked_causal
