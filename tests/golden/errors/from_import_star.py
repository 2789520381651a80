from typing import *

def mask_mod(b, h, q_idx: Optional[int], kv_idx):
    return q_idx >= kv_idx
