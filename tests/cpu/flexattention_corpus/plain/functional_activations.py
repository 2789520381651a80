def score_mod(score, b, h, q_idx, kv_idx):
    x = score * 4.0
    softplus = x if x > 20.0 else torch.log1p(torch.exp(x))
    return score * torch.sigmoid(score) + softplus * 0.25 - max(score - 1.0, 0.0)
