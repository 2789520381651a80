# Test program: a boolean table selects 64 x 64 blocks (a top-k selection written as a mask),
# causal inside them; the block mask reads the table over each tile's box of blocks.
allowed: Tensor[bool, 2]

def mask_mod(b, h, q_idx, kv_idx):
    return allowed[q_idx // 64, kv_idx // 64] & (q_idx >= kv_idx)
