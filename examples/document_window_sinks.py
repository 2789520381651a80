# Causal attention inside packed documents, limited to a 1024-token window,
# except that the first 4 tokens are always visible (attention sinks).
doc_ids: Tensor[int32, 1]

def sliding_window(w):             # factory: nested def closing over its argument
    def mask(b, h, q_idx, kv_idx):
        return q_idx - kv_idx < w
    return mask

def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx

def same_doc(b, h, q_idx, kv_idx):
    if doc_ids[q_idx] == doc_ids[kv_idx]:
        return True
    else:
        return False

mask_mod = and_masks(causal, same_doc, or_masks(sliding_window(1024), lambda b, h, q, k: k < 4))
