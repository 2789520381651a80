if True:
    CAP = 1.0

def mask_mod(b, h, q_idx, kv_idx):
    return True
