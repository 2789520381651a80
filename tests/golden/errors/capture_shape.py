doc_ids: Tensor[int32, 1]

def mask_mod(b, h, q_idx, kv_idx):
    return kv_idx < doc_ids.size(1)
