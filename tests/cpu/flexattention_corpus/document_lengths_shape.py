import torch
from torch import Tensor

document_id: Tensor[int32, 1]

assert document_id.dim() == 1, "document_id holds one id per position"
assert document_id.shape[0] >= 8, "need at least 8 positions"


def generate_doc_mask_mod(doc_ids: Tensor):
    doc_ids = doc_ids.to("cuda").contiguous()
    n = len(doc_ids)

    def doc_mask_mod(b, h, q_idx, kv_idx):
        in_range = (q_idx < n) & (kv_idx < doc_ids.size(0))
        return in_range & (doc_ids[q_idx] == doc_ids[kv_idx]) & (q_idx >= kv_idx)

    return doc_mask_mod


mask_mod = generate_doc_mask_mod(document_id)
