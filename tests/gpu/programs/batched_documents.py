# Test program: packed documents with their own layout per batch entry ([B, T] ids), so the block
# mask differs per batch entry (one map per entry).
batch_doc_ids: Tensor[int32, 2]

def mask_mod(b, h, q_idx, kv_idx):
    return (batch_doc_ids[b, q_idx] == batch_doc_ids[b, kv_idx]) & (q_idx >= kv_idx)
