# sin, cos, tan and erf in a score_mod, with arguments past 105615 (q_idx * kv_idx is exact in
# float up to 2**24) where the kernels reduce them out of line, and moderate ones inline.
def score_mod(score, b, h, q_idx, kv_idx):
    wide = q_idx * kv_idx + 1
    ripple = torch.sin(wide) * 0.5 + torch.cos(wide * 3) * 0.25
    return torch.erf(score) * 2.0 + torch.tan(score * 0.2) + torch.cos(score) * ripple + torch.sin(h + score)

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
