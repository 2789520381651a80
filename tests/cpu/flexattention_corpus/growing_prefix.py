from torch.nn.attention.flex_attention import and_masks, or_masks


def generate_growing_prefix(ratio=0.5, sink=3.0):
    # each query sees a prefix that grows at half its position, plus the diagonal
    def in_prefix(b, h, q_idx, kv_idx):
        limit = q_idx * ratio + sink
        return kv_idx < limit

    def diagonal(b, h, q_idx, kv_idx):
        return kv_idx == q_idx

    return or_masks(in_prefix, diagonal)


mask_mod = generate_growing_prefix()
