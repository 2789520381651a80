def score_mod(score, b, h, q_idx, kv_idx):
    return torch.tanh(score / 20.0) * 20.0
