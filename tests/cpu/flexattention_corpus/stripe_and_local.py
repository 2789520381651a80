from torch.nn.attention.flex_attention import and_masks, noop_mask, or_masks

LOCAL = 8
STRIDE = 16


def local(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() < LOCAL


def stripe(b, h, q_idx, kv_idx):
    return kv_idx % STRIDE == STRIDE - 1


mask_mod = and_masks(noop_mask, or_masks(local, stripe), lambda b, h, q_idx, kv_idx: q_idx >= kv_idx)
