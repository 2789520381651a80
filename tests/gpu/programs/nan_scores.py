# Test program: NaN scores. Rows q_idx % 4 == 1 score one kept key (kv_idx 0) NaN and rows
# q_idx % 4 == 2 score every key NaN: their out and lse must be NaN, as in PyTorch. Rows
# q_idx % 4 == 3 score NaN only keys their mask removes, which must not count.
def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx % 4 != 3) | (kv_idx < 64)


def score_mod(score, b, h, q_idx, kv_idx):
    r = q_idx % 4
    nan = ((r == 1) & (kv_idx == 0)) | (r == 2) | ((r == 3) & (kv_idx >= 64))
    return torch.where(nan, float("nan"), score)
