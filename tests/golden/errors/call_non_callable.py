CAP = 50.0

def score_mod(score, b, h, q_idx, kv_idx):
    return CAP(score)
