"""flexjit.attention with Python functions as mods, written the ways model code writes them:
closures, lambdas, partials, helpers, attributes of objects, captured arrays. Each is checked
against the float64 oracle run on the same mods written as a program."""

import functools
import math
import types

import numpy as np
import pytest

import flexjit
from flexjit import _attention, _kernel, _mods
from flexjit.errors import CompileError
from conftest import oracle_backward, oracle_forward, qkv, relative_l2


def run(rng, expected_program, bind, **mods):
    q, k, v = qkv(rng)
    out, lse = flexjit.attention(q, k, v, enable_gqa=True, return_lse=True, **mods)
    ref_out, ref_lse = oracle_forward(expected_program, q, k, v, bind)
    assert relative_l2(out, ref_out) < 1e-5
    assert relative_l2(lse, ref_lse) < 1e-5
    return q, k, v, out, lse


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding_window(width):
    def mask(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx >= 0) & (q_idx - kv_idx < width)

    return mask


def test_a_module_level_function(rng):
    run(rng, "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n", {}, mask_mod=causal)


def test_a_closure_over_an_int_is_a_runtime_scalar(rng):
    text = "w: int\ndef mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx - kv_idx >= 0) & (q_idx - kv_idx < w)\n"
    run(rng, text, {"w": 9}, mask_mod=sliding_window(9))
    before = _kernel.engine().counters()["compiles"] + len(_attention._kernels)
    run(rng, text, {"w": 23}, mask_mod=sliding_window(23))
    assert _kernel.engine().counters()["compiles"] + len(_attention._kernels) == before


def test_lambdas_and_captured_arrays(rng):
    slopes = rng.uniform(0.1, 1.0, 4).astype(np.float32)
    cap = 20.0
    score = lambda s, b, h, q_idx, kv_idx: cap * math.tanh((s + slopes[h] * (kv_idx - q_idx)) / cap)  # noqa: E731
    text = ("slopes: Tensor[float32, 1]\ncap: float\n"
            "def score_mod(s, b, h, q_idx, kv_idx):\n"
            "    return cap * math.tanh((s + slopes[h] * (kv_idx - q_idx)) / cap)\n"
            "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n")
    run(rng, text, {"slopes": slopes, "cap": cap}, score_mod=score, mask_mod=lambda b, h, q, kv: q >= kv)


def test_a_captured_bool_array(rng):
    # numpy bools cross as bytes tagged as bools (the pair the C++ side also reads FP8 codes by).
    keep = rng.random(70) < 0.5
    keep[0] = True
    text = "keep: Tensor[bool, 1]\ndef mask_mod(b, h, q_idx, kv_idx):\n    return keep[kv_idx]\n"
    run(rng, text, {"keep": keep}, mask_mod=lambda b, h, q_idx, kv_idx: keep[kv_idx])


class Layer:
    def __init__(self, rng):
        self.bias = rng.standard_normal((4, 70)).astype(np.float32)
        self.config = {"window": 12}

    def mods(self):
        def score_mod(score, b, h, q_idx, kv_idx):
            return score + self.bias[h, kv_idx]

        def mask_mod(b, h, q_idx, kv_idx):
            return abs(q_idx - kv_idx) < self.config["window"]

        return score_mod, mask_mod


class CallableLayer(Layer):
    """A layer object that is itself callable, as an nn.Module is: its attributes are still read."""

    def __call__(self, *args):
        raise AssertionError("a mod's object is never called")


@pytest.mark.parametrize("layer_class", [Layer, CallableLayer])
def test_attributes_and_items_of_objects_are_captured(rng, layer_class):
    layer = layer_class(rng)
    score_mod, mask_mod = layer.mods()
    text = ("bias: Tensor[float32, 2]\nwindow: int\n"
            "def score_mod(score, b, h, q_idx, kv_idx):\n    return score + bias[h, kv_idx]\n"
            "def mask_mod(b, h, q_idx, kv_idx):\n    return abs(q_idx - kv_idx) < window\n")
    run(rng, text, {"bias": layer.bias, "window": 12}, score_mod=score_mod, mask_mod=mask_mod)


def band(b, h, q_idx, kv_idx, lo, hi):
    return (lo <= q_idx - kv_idx) & (q_idx - kv_idx < hi)


def helper_mask(b, h, q_idx, kv_idx):
    return causal(b, h, q_idx, kv_idx) | (kv_idx < 4)


def test_partials_and_helpers(rng):
    text = ("lo: int\nhi: int\ndef mask_mod(b, h, q_idx, kv_idx):\n"
            "    return (lo <= q_idx - kv_idx) & (q_idx - kv_idx < hi)\n")
    run(rng, text, {"lo": 2, "hi": 30}, mask_mod=functools.partial(band, lo=2, hi=30))
    text = "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) | (kv_idx < 4)\n"
    run(rng, text, {}, mask_mod=helper_mask)


def test_the_program_names_captures_after_the_users_variables(rng):
    translation, bind = _mods.translate(mask_mod=sliding_window(5))
    assert "width: int" in translation.text
    assert bind == {"width": 5}


def test_new_values_reuse_the_program_and_new_kinds_do_not():
    first, bind = _mods.translate(mask_mod=sliding_window(5))
    again, bind_again = _mods.translate(mask_mod=sliding_window(7))
    assert again is first and bind_again == {"width": 7}
    as_float, bind_float = _mods.translate(mask_mod=sliding_window(7.5))
    assert as_float is not first and "width: float" in as_float.text and bind_float == {"width": 7.5}
    array = np.arange(3, dtype=np.int32)
    as_array, _ = _mods.translate(mask_mod=sliding_window(array))
    assert "width: Tensor[int32, 1]" in as_array.text


def test_one_function_reached_twice_is_copied_once():
    mask = sliding_window(3)
    translation, bind = _mods.translate(mask_mod=mask, score_mod=functools.partial(band_score, m=mask))
    assert translation.text.count("def mask(") == 1
    assert bind == {"width": 3}


def band_score(score, b, h, q_idx, kv_idx, m):
    return score if m(b, h, q_idx, kv_idx) else score - 1.0


def test_backward_with_capture_gradients(rng):
    slopes = rng.uniform(0.1, 1.0, 4).astype(np.float32)

    def score_mod(score, b, h, q_idx, kv_idx):
        return score - slopes[h] * abs(q_idx - kv_idx)

    text = ("slopes: Tensor[float32, 1]\ndef score_mod(score, b, h, q_idx, kv_idx):\n"
            "    return score - slopes[h] * abs(q_idx - kv_idx)\n")
    q, k, v, out, lse = run(rng, text, {"slopes": slopes}, score_mod=score_mod)
    dout = rng.standard_normal(out.shape).astype(np.float32)
    dq, dk, dv, grads = flexjit.attention_backward(q, k, v, out, lse, dout, score_mod=score_mod, enable_gqa=True,
                                                   capture_grads=True)
    ref_dq, ref_dk, ref_dv, ref_captures = oracle_backward(text, q, k, v, dout, {"slopes": slopes})
    assert relative_l2(dq, ref_dq) < 1e-4 and relative_l2(dk, ref_dk) < 1e-4 and relative_l2(dv, ref_dv) < 1e-4
    assert relative_l2(grads["slopes"], ref_captures["slopes"]) < 1e-4


def test_grouped_heads_need_enable_gqa(rng):
    q, k, v = qkv(rng)
    with pytest.raises(flexjit.ArgumentError, match="enable_gqa=True"):
        flexjit.attention(q, k, v, mask_mod=causal)



GLOBAL_SCALE = 0.5


def scaled_band(score, b, h, q_idx, kv_idx, lo, hi):
    return score * GLOBAL_SCALE if band(b, h, q_idx, kv_idx, lo, hi) else score


def band_from(lo, b, h, q_idx, kv_idx, hi):
    return band(b, h, q_idx, kv_idx, lo, hi)


def test_each_value_is_found_again_by_its_route(rng):
    """A traced call (torch.compile) reads the values through Translation.routes with `follow`:
    every route leads to the value the walk bound, through closures, globals, attributes and
    items, and partials' positional and keyword arguments."""
    layer = Layer(rng)
    score_mod, mask_mod = layer.mods()
    cases = [
        {"score_mod": score_mod, "mask_mod": mask_mod},
        {"mask_mod": functools.partial(band_from, 2, hi=30)},
        {"score_mod": functools.partial(scaled_band, lo=1, hi=9), "mask_mod": sliding_window(7)},
    ]
    for entries in cases:
        translation, bind = _mods.translate(**entries)
        assert len(translation.routes) == len(bind) > 0
        for name, route in zip(translation.names, translation.routes):
            assert _mods.follow(entries, route) is bind[name], (name, route)


HELPER = causal


def via_helper(b, h, q_idx, kv_idx):
    return HELPER(b, h, q_idx, kv_idx)


def test_the_same_mods_again_walk_again_only_where_the_program_would_change():
    """A call with the mod objects of a call before reads its values along the recorded routes; a
    change the program depends on (a value's kind, a function a global names, a partial's
    arguments) makes it walk again, and new values of the same kinds give the same program."""
    global HELPER
    width = 5

    def mask(b, h, q_idx, kv_idx):
        return q_idx - kv_idx < width

    first, bind = _mods.translate(mask_mod=mask)
    assert bind == {"width": 5}
    width = 9
    again, bind = _mods.translate(mask_mod=mask)
    assert again is first and bind == {"width": 9}
    width = 7.5
    as_float, bind = _mods.translate(mask_mod=mask)
    assert as_float is not first and "width: float" in as_float.text and bind == {"width": 7.5}

    try:
        causal_program, _ = _mods.translate(mask_mod=via_helper)
        assert "q_idx >= kv_idx" in causal_program.text
        HELPER = sliding_window(3)
        window_program, bind = _mods.translate(mask_mod=via_helper)
        assert window_program is not causal_program and bind == {"width": 3}
    finally:
        HELPER = causal

    partial = functools.partial(band, lo=2, hi=30)
    first, bind = _mods.translate(mask_mod=partial)
    partial.keywords["hi"] = 31
    again, bind = _mods.translate(mask_mod=partial)
    assert again is first and bind == {"lo": 2, "hi": 31}
    del partial.keywords["hi"]
    with pytest.raises(CompileError):  # band's hi is missing now: walked again, and refused
        flexjit.attention(*qkv(np.random.default_rng(0)), mask_mod=partial, enable_gqa=True)


def test_the_memo_of_mods_keeps_no_captured_array_alive():
    """What a call's mods captured goes when the caller drops them: the memo of mods holds its
    objects weakly."""
    import gc
    import weakref

    def biased_mod():
        table = np.arange(70, dtype=np.float32)

        def biased(score, b, h, q_idx, kv_idx):
            return score + table[kv_idx]

        return biased, weakref.ref(table)

    biased, table_alive = biased_mod()
    _mods.translate(score_mod=biased, mask_mod=via_helper)
    _mods.translate(score_mod=biased, mask_mod=via_helper)  # the memo's path
    del biased
    gc.collect()
    assert table_alive() is None
