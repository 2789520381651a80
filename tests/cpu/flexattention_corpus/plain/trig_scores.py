def score_mod(score, b, h, q_idx, kv_idx):
    return (torch.sin(torch.cos(score)) + torch.tan(float(b))) + (torch.cos(score) * torch.sin(score) + torch.tan(float(b)))
