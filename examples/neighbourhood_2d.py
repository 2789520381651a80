# 2D neighbourhood attention over an image laid out row by row (WIDTH pixels per row): each
# pixel attends to the pixels within RADIUS rows and columns of it (NATTEN-style).
WIDTH = 64
RADIUS = 7

def mask_mod(b, h, q_idx, kv_idx):
    row_distance = abs(q_idx // WIDTH - kv_idx // WIDTH)
    col_distance = abs(q_idx % WIDTH - kv_idx % WIDTH)
    return row_distance <= RADIUS and col_distance <= RADIUS
