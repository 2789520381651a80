# Every function the math modes compute differently (codegen/float_math.cpp), and constant
# divisors, in a score_mod whose values stay moderate.
TEMPERATURE = 3.0

def score_mod(score, b, h, q_idx, kv_idx):
    distance = abs(q_idx - kv_idx)
    gate = torch.sigmoid(score / TEMPERATURE)
    decay = torch.exp(-distance / 512.0) + torch.exp2(-distance / 1024.0)
    damping = torch.log(1.0 + distance) / 8.0 + torch.log2(2.0 + h) / 4.0
    return 2.0 * torch.tanh(score / 2.0) * gate + decay - damping * torch.rsqrt(1.0 + b)

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
