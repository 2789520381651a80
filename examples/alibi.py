# ALiBi (Press et al.): a per-head linear bias on the distance, with causal masking.
import math

NUM_HEADS = 16

def score_mod(score, b, h, q_idx, kv_idx):
    slope = 2.0 ** (-8.0 * (h + 1) / NUM_HEADS)
    return score - slope * (q_idx - kv_idx)

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
