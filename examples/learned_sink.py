# gpt-oss style: causal sliding window with a learned sink logit per head. The sink adds
# exp(sinks[h]) to each row's softmax denominator and contributes no value vector.
window: int
sinks: Tensor[float32, 1]

def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) and (q_idx - kv_idx < window)

def sink(b, h):
    return sinks[h]
