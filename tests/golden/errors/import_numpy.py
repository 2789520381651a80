import numpy as np

def mask_mod(b, h, q_idx, kv_idx):
    return np.abs(q_idx - kv_idx) < 4
