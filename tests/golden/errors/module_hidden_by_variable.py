# A variable named like a module hides it: torch.tanh is then a method of the int.
torch = 3


def score_mod(score, b, h, q_idx, kv_idx):
    return torch.tanh(score)
