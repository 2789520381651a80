# Chunked attention (Llama 4 local layers): causal within fixed chunks of CHUNK tokens.
CHUNK = 8192

def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx // CHUNK == kv_idx // CHUNK) and q_idx >= kv_idx
