from torch.nn.attention.flex_attention import or_masks

PREFIX_ROWS = 5


def first_rows(b, h, q_idx, kv_idx):
    # the first query rows see every key, whatever the key
    return q_idx < PREFIX_ROWS


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


mask_mod = or_masks(first_rows, causal)
