import torch

# the window comes from a config as a float and changes per call
window: float


def sliding_window(b, h, q_idx, kv_idx):
    causal = kv_idx <= q_idx
    in_window = kv_idx > q_idx - window
    return causal & in_window


mask_mod = sliding_window
