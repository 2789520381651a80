mask_mod = 3
