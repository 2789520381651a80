from math import floor, log, sqrt

HEAD_DIM = 64


def score_mod(score, b, h, q_idx, kv_idx):
    temperature = sqrt(HEAD_DIM) / 8.0
    bucket = floor(log(abs(q_idx - kv_idx) + 1))
    return score / temperature - 0.1 * bucket
