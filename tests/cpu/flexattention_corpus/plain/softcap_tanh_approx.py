def score_mod(score, b, h, q_idx, kv_idx):
    return 30.0 * torch.tanh(score / 30.0)
