def score_mod(score, b, h, q_idx, kv_idx):
    return torch.atan2(score, 1.0)
