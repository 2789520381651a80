SOFT_CAP = 20.0


def score_mod(score, b, h, q_idx, kv_idx):
    return (score / SOFT_CAP).tanh() * SOFT_CAP
