# Gemma 2 / Grok style tanh soft-capping of the logits, with causal masking.
SOFTCAP = 50.0

def score_mod(score, b, h, q_idx, kv_idx):
    return SOFTCAP * torch.tanh(score / SOFTCAP)

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
