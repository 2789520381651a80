# Causal attention restricted to the query's own 64-key block: what topk_causal computes when
# every query block lists exactly its diagonal block (tests/gpu/block_sparse_test.cpp).
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx and q_idx // 64 == kv_idx // 64
