# DeepSeek sparse attention (DSA), token-level top-k: each query row attends only to the keys its
# indexer listed for it, and causally among them. A call binds `selected`, an int32 tensor
# [B, H, Tq, K]: H = Hq, Hkv (one list per kv head, shared by its query heads) or 1; each entry a
# key position or -1 (an unused slot); K the length of a list (2048 in DeepSeek-V3.2). The mask
# compares rows with keys as a prefill does (Tq = Tkv); against a KV cache, compare positions
# instead (examples/decode_causal.py). Runs on cpu kernels (Device::cpu(), --device cpu), forward
# and backward; on CUDA, the forward on the decode family's kernel.
selected: TokenIndices

def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
