# Test program: as masked_rows.py, plus a learned sink: fully masked rows give out = 0 and
# lse = sinks[h] (the sink is the only term of their denominator).
sinks: Tensor[float32, 1]

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx - kv_idx >= 100

def sink(b, h):
    return sinks[h]
