# Test program: query rows q_idx < 100 see no key at all, so their output must be exactly 0 and
# their lse -inf; the first query tile mixes such rows with rows that see keys.
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx - kv_idx >= 100
