"""What users feed the Python front end that it once got wrong: captured values whose names collide
with the mod's own names (parameters, locals, builtins, keywords), names bound only in a nested
scope, a value that reads differently on a second look, files that no longer parse, chains of
functions too deep to walk, and arguments of the wrong kind. Each gives the right result or one of
flexjit's own errors naming the problem; never another exception, never a wrong answer."""

import functools
import importlib
import linecache
import re
import sys
import textwrap

import numpy as np
import pytest

import flexjit
from conftest import qkv
from flexjit import _mods
from flexjit.errors import ArgumentError, CompileError


def same_as(mask_mod, reference, **kw):
    """flexjit's output under mask_mod equals its output under the plainly written reference."""
    q, k, v = qkv(np.random.default_rng(5), Hkv=4, Tq=33, Tkv=33)
    got = flexjit.attention(q, k, v, mask_mod=mask_mod, **kw)
    want = flexjit.attention(q, k, v, mask_mod=reference, **kw)
    np.testing.assert_array_equal(got, want)


def test_a_captured_value_named_like_a_parameter_is_not_the_parameter():
    d = {"q_idx": 3, "h": 1}

    def mask(b, h, q_idx, kv_idx):
        return (kv_idx <= d["q_idx"]) | (h == d["h"])

    def reference(b, h, q_idx, kv_idx):
        return (kv_idx <= 3) | (h == 1)

    same_as(mask, reference)


def test_a_captured_value_named_like_the_local_it_is_assigned_to():
    class Config:
        window = 5

    cfg = Config()

    def mask(b, h, q_idx, kv_idx):
        window = cfg.window  # the FlexAttention idiom `slopes = self.slopes`
        return (q_idx >= kv_idx) & (q_idx - kv_idx < window)

    def reference(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < 5)

    same_as(mask, reference)


def test_a_captured_value_named_like_a_builtin_the_mod_calls():
    d = {"abs": 4}

    def mask(b, h, q_idx, kv_idx):
        return abs(q_idx - kv_idx) < d["abs"]

    def reference(b, h, q_idx, kv_idx):
        return abs(q_idx - kv_idx) < 4

    same_as(mask, reference)


def test_captured_values_under_keys_that_are_keywords_or_not_ascii():
    d = {None: 2, "True": 7, "class": 1, "ω": 0}

    def mask(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx < d[None] + d["True"] + d["class"] + d["ω"]) & (q_idx >= kv_idx)

    def reference(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx < 10) & (q_idx >= kv_idx)

    same_as(mask, reference)


W = 3


def test_a_global_that_a_nested_lambda_takes_as_a_parameter():
    def mask(b, h, q_idx, kv_idx):
        plus_one = lambda W: W + 1  # noqa: E731 - this W is the lambda's own
        return (q_idx - kv_idx < plus_one(W)) & (q_idx >= kv_idx)

    def reference(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx < 4) & (q_idx >= kv_idx)

    same_as(mask, reference)


def test_a_value_that_reads_differently_the_second_time_gets_a_program_of_its_kind():
    """The writing walk reads the values again; its program is kept under what it read."""
    class Flaky:
        reads = 0

        @property
        def w(self):
            Flaky.reads += 1
            return 5.5 if Flaky.reads == 2 else 5

    cfg = Flaky()

    def mask(b, h, q_idx, kv_idx):
        return q_idx - kv_idx < cfg.w

    translation, bind = _mods.translate(mask_mod=mask)
    (name,) = bind
    declared = "float" if isinstance(bind[name], float) else "int"
    assert f"{name}: {declared}" in translation.text


def edited_after_import(tmp_path, monkeypatch, name, before, after):
    """The function `mask` of a module imported from `before`, its file then rewritten to `after`
    (linecache told), as a notebook's file is edited while the process runs."""
    path = tmp_path / f"{name}.py"
    path.write_text(before)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    sys.modules.pop(name)
    path.write_text(after)
    linecache.checkcache(str(path))
    return module.mask


CAUSAL_FILE = "def mask(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n"


def test_a_file_that_no_longer_parses_is_named(tmp_path, monkeypatch):
    mask = edited_after_import(tmp_path, monkeypatch, "edited_mods", CAUSAL_FILE,
                               "def mask(b, h, q_idx, kv_idx):\n    return q_idx >= \n")
    with pytest.raises(CompileError, match=r"edited_mods\.py does not parse now .*edited after"):
        _mods.translate(mask_mod=mask)


def test_closures_wrapped_a_thousand_deep_are_refused_in_bounded_depth():
    def wrap(f):
        def g(b, h, q_idx, kv_idx):
            return f(b, h, q_idx, kv_idx)
        return g

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    mask = causal
    for _ in range(1000):
        mask = wrap(mask)
    with pytest.raises(CompileError, match="more than 64 deep"):
        _mods.translate(mask_mod=mask)


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


@pytest.mark.parametrize("call, message", [
    (lambda q, k, v: flexjit.attention(q, k, v, mask_mod=3), "mask_mod must be a function"),
    (lambda q, k, v: flexjit.attention([[1.0]], k, v), "q: expected an array"),
    (lambda q, k, v: flexjit.attention(q, k, v, mask_mod=causal, scale="0.5"), "scale: expected a number"),
    (lambda q, k, v: flexjit.attention(q, k, v, mask_mod=causal, scale=10 ** 400), "scale: expected a number"),
    (lambda q, k, v: flexjit.attention(q, k, v, mask_mod=causal, kernel_options={"BLOCK_M": "abc"}),
     r"kernel_options\['BLOCK_M'\]: expected an int"),
    (lambda q, k, v: flexjit.attention(q, k, v, mask_mod=causal, kernel_options=[1]), "kernel_options: expected a dict"),
    (lambda q, k, v: flexjit.compile("def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n", 16, "float32",
                                     "cpu", math="Exact"), "math: expected 'fast' or 'exact'"),
    (lambda q, k, v: flexjit.compile("def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n", 16, "float32",
                                     "CPU"), "device: expected 'cpu' or 'cuda'"),
    (lambda q, k, v: flexjit.compile("def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n", "16",
                                     "float32", "cpu"), "head_dim: expected a non-negative int"),
    (lambda q, k, v: flexjit.compile(b"def mask_mod(b, h, q_idx, kv_idx): return True\n", 16, "float32", "cpu"),
     "expected program text or a path"),
])
def test_arguments_of_the_wrong_kind_are_named(call, message):
    q, k, v = qkv(np.random.default_rng(1), Hkv=4, Tq=8, Tkv=8)
    with pytest.raises(ArgumentError, match=message):
        call(q, k, v)


def test_a_kernel_bound_with_something_not_a_dict_is_told_so():
    kernel = flexjit.compile(textwrap.dedent("""\
        window: int

        def mask_mod(b, h, q_idx, kv_idx):
            return q_idx - kv_idx < window
        """), 16, "float32", "cpu")
    q, k, v = qkv(np.random.default_rng(1), Hkv=4, Tq=8, Tkv=8)
    with pytest.raises(ArgumentError, match="bind: expected a dict"):
        kernel.forward(q, k, v, bind=5)


def test_big_endian_arrays_are_read_by_value():
    q, k, v = qkv(np.random.default_rng(2), Hkv=4, Tq=16, Tkv=16)
    offsets = np.arange(16, dtype=">i4")  # a captured table in big-endian order

    def mask(b, h, q_idx, kv_idx):
        return offsets[q_idx] >= offsets[kv_idx]

    got = flexjit.attention(q.astype(">f4"), k, v.astype(">f4"), mask_mod=mask)
    want = flexjit.attention(q, k, v, mask_mod=causal)
    np.testing.assert_array_equal(got, want)


def test_a_partial_of_a_mod_keeps_its_keywords_names():
    """Names the program declares at the top, outside any function, need not avoid the functions'
    parameters: bound gradients and values keep the names the user wrote."""
    def band(b, h, q_idx, kv_idx, lo, hi):
        return (q_idx - kv_idx >= lo) & (q_idx - kv_idx <= hi)

    _, bind = _mods.translate(mask_mod=functools.partial(band, lo=1, hi=4))
    assert bind == {"lo": 1, "hi": 4}


def test_a_file_edited_after_import_is_not_copied_silently(tmp_path, monkeypatch):
    """Python runs the code it imported; flexjit reads the file. Lines that now compile to other
    code (an operator turned round) are refused rather than compiled."""
    mask = edited_after_import(tmp_path, monkeypatch, "turned_mods", CAUSAL_FILE, CAUSAL_FILE.replace(">=", "<="))
    with pytest.raises(CompileError, match=r"turned_mods\.py has changed since 'mask' was defined"):
        _mods.translate(mask_mod=mask)


def test_a_mod_under_lru_cache_is_the_function_it_wraps():
    @functools.lru_cache(maxsize=None)
    def near(distance):
        return distance < 3

    def mask(b, h, q_idx, kv_idx):
        return near(q_idx - kv_idx) & (q_idx >= kv_idx)

    def reference(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx < 3) & (q_idx >= kv_idx)

    same_as(functools.cache(mask), reference)


def test_counting_kept_pairs_is_bounded_and_grads_are_names():
    kernel = flexjit.compile("def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n", 16, "float32", "cpu")
    with pytest.raises(ArgumentError, match=r"budget: expected an int in \[1, 268435456\]"):
        kernel.kept_pairs([0, 10 ** 6], budget=1 << 62)
    q, k, v = qkv(np.random.default_rng(1), Hkv=4, Tq=8, Tkv=8)
    out, lse = kernel.forward(q, k, v, return_lse=True)
    with pytest.raises(ArgumentError, match="grads: expected a sequence of names, got the string 'ab'"):
        kernel.backward(q, k, v, out, lse, out, grads="ab")


def test_a_builtin_given_as_the_mask_is_told_what_flexjit_takes():
    with pytest.raises(CompileError, match="mask_mod is a builtin_function_or_method: flexjit takes a function"):
        _mods.translate(mask_mod=max)


class Model:
    """Mods written as methods, as a module's code writes them."""

    def __init__(self, window, slopes):
        self.window, self.slopes = window, slopes

    def mask(self, b, h, q_idx, kv_idx):
        return self.near(q_idx, kv_idx) & (q_idx >= kv_idx)

    def near(self, q_idx, kv_idx):
        return q_idx - kv_idx < self.window

    def bias(self, score, b, h, q_idx, kv_idx):
        slopes = self.slopes  # a local named like the attribute
        return score - slopes[h] * (q_idx - kv_idx)


def test_methods_are_mods_with_self_read_on_their_object():
    model = Model(5, np.array([0.5, 0.25, 0.125, 0.0625], np.float32))

    def mask(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx < 5) & (q_idx >= kv_idx)

    same_as(model.mask, mask)
    q, k, v = qkv(np.random.default_rng(5), Hkv=4, Tq=33, Tkv=33)
    got = flexjit.attention(q, k, v, score_mod=model.bias, mask_mod=model.mask)
    slopes = model.slopes
    want = flexjit.attention(q, k, v, score_mod=lambda s, b, h, qi, ki: s - slopes[h] * (qi - ki), mask_mod=mask)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    model.window = 2  # a new value of the same kind: the same program, the new value
    translation, bind = _mods.translate(mask_mod=model.mask)
    assert 2 in bind.values() and "self" not in translation.text


def test_a_captured_int_past_64_bits_is_named_where_it_is_read():
    big = 1 << 70

    def mask(b, h, q_idx, kv_idx):
        return q_idx - kv_idx < big

    with pytest.raises(CompileError, match=r"'big' is 1180591620717411303424: a runtime int must fit in 64 bits"):
        _mods.translate(mask_mod=mask)


def test_numpy_scalar_types_name_an_element_type():
    kernel = flexjit.compile("def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n", 16, np.float32, "cpu")
    assert kernel.dtype == "f32"


def test_a_deleted_file_is_told_apart_from_code_made_by_exec(tmp_path, monkeypatch):
    mask = edited_after_import(tmp_path, monkeypatch, "deleted_mods", CAUSAL_FILE, "")
    (tmp_path / "deleted_mods.py").unlink()
    linecache.checkcache()
    with pytest.raises(CompileError, match=r"not in .*deleted_mods\.py as it is now \(the file was moved, deleted"):
        _mods.translate(mask_mod=mask)
    namespace = {}
    exec(CAUSAL_FILE, namespace)
    with pytest.raises(CompileError, match="typed into an interactive session or made by exec"):
        _mods.translate(mask_mod=namespace["mask"])


def test_a_default_that_reuses_its_parameters_name_reads_the_enclosing_value():
    """`def near(x, W=W)`: the default is evaluated where the def is, so it reads the global W."""
    def near(x, W=W):
        return x < W

    def mask(b, h, q_idx, kv_idx):
        return near(q_idx - kv_idx) & (q_idx >= kv_idx)

    def reference(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx < 3) & (q_idx >= kv_idx)

    same_as(mask, reference)


def test_a_constant_edited_after_import_is_refused_and_a_comment_is_not(tmp_path, monkeypatch):
    mask = edited_after_import(tmp_path, monkeypatch, "constant_mods", CAUSAL_FILE.replace("kv_idx\n", "kv_idx + 3\n"),
                               CAUSAL_FILE.replace("kv_idx\n", "kv_idx + 5\n"))
    with pytest.raises(CompileError, match="has changed since 'mask' was defined"):
        _mods.translate(mask_mod=mask)
    mask = edited_after_import(tmp_path, monkeypatch, "comment_mods", CAUSAL_FILE,
                               CAUSAL_FILE.replace("kv_idx\n", "kv_idx  # a comment\n"))
    translation, _ = _mods.translate(mask_mod=mask)
    assert "q_idx >= kv_idx  # a comment" in translation.text


def helper_below_3(x):
    return x < 3


alias_of_helper = helper_below_3


def test_a_function_reached_again_under_a_name_its_reader_binds_is_aliased():
    def first(q_idx, kv_idx):
        return helper_below_3(q_idx - kv_idx)

    def second(q_idx, kv_idx):
        helper_below_3 = lambda x: x < 6  # noqa: E731 - this reader's own helper_below_3
        return alias_of_helper(q_idx - kv_idx) & (helper_below_3(0) | True)

    def mask(b, h, q_idx, kv_idx):
        return (first(q_idx, kv_idx) & (b < 0)) | (second(q_idx, kv_idx) & (q_idx >= kv_idx))

    def reference(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx < 3) & (q_idx >= kv_idx)

    same_as(mask, reference)


class Plain:
    def mask(self, b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def split(
        self,
        b, h, q_idx, kv_idx,
    ):
        return q_idx >= kv_idx


def test_a_method_and_its_function_are_two_programs():
    q, k, v = qkv(np.random.default_rng(5), Hkv=4, Tq=33, Tkv=33)
    with pytest.raises(CompileError, match="must take 4 parameters"):
        flexjit.attention(q, k, v, mask_mod=Plain.mask)
    same_as(Plain().mask, causal)
    same_as(Plain().split, causal)  # self on a line of its own


def test_wrappers_stacked_past_the_limit_are_refused():
    mask = causal
    for _ in range(700):
        mask = functools.lru_cache(maxsize=None)(mask)
    with pytest.raises(CompileError, match="more than 64 deep"):
        _mods.translate(mask_mod=mask)


def test_the_memo_keeps_no_object_that_takes_no_weak_reference():
    import gc
    import weakref

    class Slotted:
        __slots__ = ("table",)

        def mask(self, b, h, q_idx, kv_idx):
            return self.table[q_idx] >= self.table[kv_idx]

    obj = Slotted()
    obj.table = np.arange(33, dtype=np.int32)
    table = weakref.ref(obj.table)
    same_as(obj.mask, causal)
    del obj
    gc.collect()
    assert table() is None


def test_a_failed_runtime_assert_points_at_the_users_line():
    window = 3

    def mask(b, h, q_idx, kv_idx):
        assert window > 0, "the window must be positive"
        return q_idx - kv_idx < window

    q, k, v = qkv(np.random.default_rng(1), Hkv=4, Tq=8, Tkv=8)
    flexjit.attention(q, k, v, mask_mod=mask)
    window = -1
    line = mask.__code__.co_firstlineno + 1
    with pytest.raises(ArgumentError, match=rf"the window must be positive.*\({re.escape(__file__)}:{line}\)$"):
        flexjit.attention(q, k, v, mask_mod=mask)
