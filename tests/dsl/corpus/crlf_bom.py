def causal(b, h, q_idx, kv_idx):
    """Docstring with CRLF
    line endings."""
    s = r"\
"
    return q_idx >= kv_idx
