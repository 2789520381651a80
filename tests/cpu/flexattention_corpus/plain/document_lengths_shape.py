document_id: Tensor[int32, 1]


def mask_mod(b, h, q_idx, kv_idx):
    return document_id[q_idx] == document_id[kv_idx] and q_idx >= kv_idx
