doc_ids: Tensor[int32, 1]


def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (doc_ids[q_idx] == doc_ids[kv_idx])
