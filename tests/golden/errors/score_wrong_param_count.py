def score_mod(score, b, h, q_idx):
    return score
