def relative_positional(score, b, h, q_idx, kv_idx):
    return score + (q_idx - kv_idx)


score_mod = relative_positional
