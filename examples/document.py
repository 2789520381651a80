# Document masking for packed sequences: tokens attend causally within their own document.
doc_ids: Tensor[int32, 1]

def mask_mod(b, h, q_idx, kv_idx):
    return (doc_ids[q_idx] == doc_ids[kv_idx]) & (q_idx >= kv_idx)
