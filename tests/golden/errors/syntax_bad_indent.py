def mask_mod(b, h, q_idx, kv_idx):
    x = q_idx
      return x >= kv_idx
