# The header of a file written for FlexAttention's newer API, which asks for the log-sum-exp
# through AuxRequest (flex_attention(..., return_aux=AuxRequest(lse=True))): the host-side names
# are imported, the mods never use them.
import torch
from torch.nn.attention.flex_attention import (
    AuxOutput,
    AuxRequest,
    BlockMask,
    create_block_mask,
    flex_attention,
)

SLIDING_WINDOW = 48


def sliding_window_causal(b, h, q_idx, kv_idx):
    causal_mask = q_idx >= kv_idx
    window_mask = q_idx - kv_idx <= SLIDING_WINDOW
    return causal_mask & window_mask


mask_mod = sliding_window_causal
