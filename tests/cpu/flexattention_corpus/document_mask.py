import torch
from torch import Tensor
from torch.nn.attention.flex_attention import _mask_mod_signature

document_id: Tensor[int32, 1]
offsets: Tensor[int32, 1]


def causal_mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def generate_doc_mask_mod(mask_mod: _mask_mod_signature) -> _mask_mod_signature:
    """Applies mask_mod inside each document, with positions counted from the document's start."""

    def doc_mask_mod(b, h, q_idx, kv_idx):
        same_doc = document_id[q_idx] == document_id[kv_idx]
        q_logical = q_idx - offsets[document_id[q_idx]]
        kv_logical = kv_idx - offsets[document_id[kv_idx]]
        inner_mask = mask_mod(b, h, q_logical, kv_logical)
        return same_doc & inner_mask

    return doc_mask_mod


mask_mod = generate_doc_mask_mod(causal_mask)
