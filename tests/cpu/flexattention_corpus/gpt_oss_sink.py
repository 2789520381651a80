from torch import Tensor

sinks: Tensor[float32, 1]
window: int


def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < window)


def sink(b, h):
    return sinks[h]
