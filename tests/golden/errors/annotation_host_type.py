from torch.nn.attention.flex_attention import BlockMask

def mask_mod(b: BlockMask, h, q_idx, kv_idx):
    return q_idx >= kv_idx
