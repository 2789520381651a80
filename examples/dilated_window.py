# Dilated causal window: every DILATION-th key within the last SPAN keys (LongNet-style
# dilated attention, one dilation rate per layer).
DILATION = 4
SPAN = 2048

def mask_mod(b, h, q_idx, kv_idx):
    distance = q_idx - kv_idx
    return 0 <= distance < SPAN and distance % DILATION == 0
