from os import path

def mask_mod(b, h, q_idx, kv_idx):
    return path is not None
