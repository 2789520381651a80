import torch
import math as m
from torch import tanh

SOFTCAP: float = 30.0
sinks: Tensor[bfloat16, 1]
prefix_len: int

def score_mod(score, b, h, q_idx, kv_idx):
    # tanh soft-capping, gemma style
    return SOFTCAP * torch.tanh(score / SOFTCAP)

def sink(b, h):
    return sinks[h]

def prefix_lm(b, h, q_idx, kv_idx): return kv_idx < prefix_len or q_idx >= kv_idx

def chunked(chunk=128):
    def mask(b, h, q, k):
        x = q // chunk; y = k // chunk
        x += 0
        return x == y if chunk > 0 else False
    return mask

def dilated(b, h, q_idx, kv_idx):
    d = (q_idx - kv_idx) % 4 == 0 and \
        q_idx >= kv_idx
    if d: return True
    elif kv_idx == 0:
        return True
    return not (0x10 <= kv_idx <= 0b1111_1111) and -2**2 < ~kv_idx
