def score_mod(score, b, h, q_idx, kv_idx):
    exact = 0.5 * score * (1.0 + torch.erf(score * 0.70710678118654752))
    approx = 0.5 * score * (1.0 + torch.tanh(0.7978845608028654 * (score + 0.044715 * (score * (score * score)))))
    angle = torch.tan(float(q_idx - kv_idx) * 0.01)
    return exact * 0.5 + approx * 0.5 + angle + torch.erf(score * 0.1)
