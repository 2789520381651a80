doc: Tensor[int32, 1]

assert doc[0] >= 0, "ids are non-negative"

def mask_mod(b, h, q_idx, kv_idx):
    return doc[q_idx] == doc[kv_idx]
