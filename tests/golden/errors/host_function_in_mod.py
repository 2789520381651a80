from torch.nn.attention.flex_attention import create_block_mask

def mask_mod(b, h, q_idx, kv_idx):
    return create_block_mask(q_idx, kv_idx)
