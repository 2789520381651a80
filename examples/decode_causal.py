# Decode against a KV cache (flexjit run --kv-lens, --page-table; ForwardOptions::kv_lens): the Tq
# new tokens of sequence b are its last Tq keys, so query row q_idx sits at position
# q_idx + offsets[b] of the sequence, with offsets[b] = kv_lens[b] - Tq. The mask compares
# positions, as FlexAttention's decode code does, and is causal among the new tokens too.
offsets: Tensor[int32, 1]   # [B]


def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
