from torch.nn.functional import gelu

def score_mod(score, b, h, q_idx, kv_idx):
    return gelu(score)
