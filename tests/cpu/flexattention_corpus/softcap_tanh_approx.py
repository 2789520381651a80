SOFT_CAP = 30.0


def generate_tanh_softcap(soft_cap, approx=True):
    tanh = tanh_approx if approx else torch.tanh

    def tanh_softcap(score, b, h, q_idx, kv_idx):
        return soft_cap * tanh(score / soft_cap)

    return tanh_softcap


score_mod = generate_tanh_softcap(SOFT_CAP)
