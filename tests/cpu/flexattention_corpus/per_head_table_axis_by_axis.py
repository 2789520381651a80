import torch

head_bias: Tensor[float32, 2]
doc_of: Tensor[int64, 2]


def generate_table_bias(table, docs):
    assert table.dim() == 2 and docs.ndim == 2, "tables are [heads, positions]"
    table = table.contiguous().to("cuda")

    def score_mod(score, b, h, q_idx, kv_idx):
        return score + table[h][kv_idx]

    def mask_mod(b, h, q_idx, kv_idx):
        return docs[b][q_idx] == docs[b][kv_idx]

    return score_mod, mask_mod


score_mod, mask_mod = generate_table_bias(head_bias, doc_of)
