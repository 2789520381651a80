if True:
    CAP = 1.0

def score_mod(score, b, h, q_idx, kv_idx):
    return score * CAP
