import random

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx + random.randint(0, 4)
