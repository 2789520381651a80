class Mask:
    pass

def mask_mod(b, h, q_idx, kv_idx):
    return Mask is not None
