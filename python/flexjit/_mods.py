"""Python mods, as FlexAttention takes them (score_mod, mask_mod; functions, nested functions,
lambdas, functools.partial, and_masks / or_masks / noop_mask, helpers they call), turned into one
flexjit program.

Each function's own source (its file through linecache, its node through ast) is copied into the
program as written. What the code reads from outside is looked up in its closure and globals at
every call: ints, floats and bools become runtime scalars, arrays captured tensors (a declaration
each, bound by value), so that new values never change the program; modules stay imports;
functions are copied too. An expression such as `self.slopes` or `cfg["window"]` whose base is
none of these is evaluated in Python and captured as a whole. A map from each program line back to
the user's file lets diagnostics point at the user's code.

A call walks the mods twice at most: a quick walk collects the values and a key of everything the
program text depends on (which code, which kinds of values, which names); only a key not seen
before walks again to write the program. Each walk also records the route from an entry point to
everything it read (closure cells, globals, attributes, items, a partial's parts): a traced call
(torch.compile) reads the values along those routes with plain Python that the tracer follows
(`follow`), and a call with the same mod objects as a call before checks only those routes (the
same objects where the program was made from them, values of the same kinds) instead of walking
again."""

import collections
import functools
import keyword
import numbers
import threading
import types
import weakref

from . import _arrays
from ._code_info import SourceUnreadable, code_info
from ._source_map import Line, copied_line, format_block
from .errors import ArgumentError, CompileError, Diagnostic, kind_of

ENTRY_POINTS = ("mask_mod", "score_mod", "sink")

# What a program may import (docs/language.md, "Imports").
_IMPORTABLE = {"torch", "math", "torch.nn.functional", "torch.nn.attention.flex_attention", "functools", "typing",
               "typing_extensions"}
_FLEX_ATTENTION = "torch.nn.attention.flex_attention"
# Names the program's own lines use; a user's value never takes them.
_RESERVED = set(ENTRY_POINTS) | {"partial", "torch", "math", "and_masks", "or_masks", "noop_mask", "Tensor"}
_DECLARED_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "f32": "float32", "f64": "float64", "i8": "int8",
                    "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "boolean": "bool"}
_PROGRAMS_KEPT = 1024  # translations remembered by key (least recently used go)
# Functions reached one inside another's reads (helpers calling helpers, closures of closures):
# beyond this the walk stops with an error rather than Python's recursion limit. The compiler's
# inliner has its own, lower limit on calls.
_MAX_FUNCTION_DEPTH = 64
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1  # a runtime int's range


class Translation:
    """A program made from mods: its text, where its lines came from, and the names the collected
    values are bound to, in the order a walk collects them. `kernels` is the caller's memo of
    what was compiled from it."""

    def __init__(self, lines, names, routes, fallback):
        self.lines = lines
        self.text = "".join(line.text + "\n" for line in lines)
        self.names = names
        self.routes = routes  # per name: the steps from an entry point to its value (`follow`)
        self.fallback = fallback  # (file, line) for diagnostics on lines flexjit wrote
        self.kernels = {}


_programs = collections.OrderedDict()
_programs_lock = threading.Lock()
# (id of each entry point's mod) -> (Translation, the walk's checks, the mods). Objects are held
# weakly (`_weak`): a memo must not keep a closure's tensors alive.
_by_mods = collections.OrderedDict()


_NEVER = object()  # what a check of an object the memo may not keep expects: nothing matches it


def _weak(obj):
    """A weak reference where the object takes one; else the object itself where it holds nothing
    of the user's (None, numbers, builtins), and for any other object (one with __slots__) a
    reference to nothing, so that the memo never matches it rather than keep it alive."""
    try:
        return weakref.ref(obj)
    except TypeError:
        if obj is None or isinstance(obj, (numbers.Number, str, bytes, types.BuiltinFunctionType, type)):
            return lambda: obj
        return lambda: _NEVER


def translate(**entries):
    """(Translation, {name: value}) for the given entry points (mask_mod=, score_mod=, sink=; None:
    not defined). Raises CompileError pointing at the user's code for what cannot be translated."""
    mask_mod, score_mod, sink = mods = (entries.get("mask_mod"), entries.get("score_mod"), entries.get("sink"))
    known = _by_mods.get((id(mask_mod), id(score_mod), id(sink)))  # a read needs no lock; moving it to
    # the end waits for a new walk. The objects are the same, not new ones at old ids.
    if known is not None:
        mask_ref, score_ref, sink_ref = known[2]  # ENTRY_POINTS' order
        if mask_ref() is mask_mod and score_ref() is score_mod and sink_ref() is sink:
            values = _values_if_unchanged(entries, known[1])
            if values is not None:
                return known[0], dict(zip(known[0].names, values))
    for role, fn in entries.items():
        if fn is not None and not callable(fn):
            raise ArgumentError(f"{role} must be a function (or None), got {kind_of(fn)}")
    mods_key = (id(mask_mod), id(score_mod), id(sink))
    walk = _Walk(writing=False)
    key = walk.run(entries)
    with _programs_lock:
        translation = _programs.get(key)
        if translation is not None:
            _programs.move_to_end(key)
    if translation is None:
        # The writing walk reads everything again: its own key, checks and values go with the
        # program it writes (a property may give another kind of value the second time).
        walk = _Walk(writing=True, avoid=walk.builtin_reads)
        key = walk.run(entries)
        routes = tuple(route for route, check, _ in walk.checks if check == "bound")  # one per name, in order
        translation = Translation(walk.program_lines(), walk.names, routes, walk.fallback or ("<flexjit>", 0))
    with _programs_lock:
        _programs[key] = translation
        _by_mods[mods_key] = (translation, tuple(walk.checks), tuple(map(_weak, mods)))
        _by_mods.move_to_end(mods_key)
        for memo in (_programs, _by_mods):
            while len(memo) > _PROGRAMS_KEPT:
                memo.popitem(last=False)
    return translation, dict(zip(translation.names, walk.values))


def _values_if_unchanged(entries, checks):
    """The bound values, read along the routes of a walk of the same mods, if everything that walk
    saw still holds (the same objects where the program came from them, the same kinds of values,
    the same names still undefined); else None (the mods walk again)."""
    values = []
    try:
        for route, check, expected in checks:
            value = follow(entries, route)
            if check == "bound":
                form = _bound_form(value)
                if form is None or form[0] != expected or (expected == "int" and not _INT64_MIN <= form[1] <= _INT64_MAX):
                    return None  # (an int past 64 bits: the walk names it where it is read)
                values.append(form[1])
            elif check == "same":
                if value is not expected():
                    return None
            elif check == "method":
                if value.__func__ is not expected[0]() or value.__self__ is not expected[1]():
                    return None
            elif check == "code":  # a function's code, which can be swapped under it
                if value.__code__ is not expected:
                    return None
            elif check == "partial":  # a partial's arguments (its keywords are a dict)
                if (len(value.args), tuple(value.keywords)) != expected:
                    return None
            elif _lookup(value, expected)[0]:  # "undefined": a name the walk did not find
                return None
    except Exception:  # a route that no longer leads anywhere: the walk says what changed
        return None
    return values


def follow(entries, route):
    """The value at the end of a route (Translation.routes) from the entry points (role -> mod):
    the reads a walk made, written as plain attribute and item reads that a tracer can follow and
    guard."""
    value = entries[route[0][1]]
    for kind, what in route[1:]:
        if kind == "closure":
            value = value.__closure__[what].cell_contents
        elif kind == "global":
            value = value.__globals__[what]
        elif kind == "attr":
            value = getattr(value, what)
        elif kind == "item":
            value = value[what]
        elif kind == "func":
            value = value.func
        elif kind == "arg":
            value = value.args[what]
        else:  # "keyword"
            value = value.keywords[what]
    return value


def _is_bool(value):
    return isinstance(value, bool) or type(value).__name__ == "bool_"


_tensor_declarations = {}  # (element type, rank) -> the declaration: one string per kind, not per call


def _bound_form(value):
    """(declaration, the value as bound) for what a program takes as a runtime scalar or captured
    tensor; None for anything else (and for arrays of element types flexjit has no name for)."""
    if _arrays.is_array(value):  # first: captured tensors are read at every call
        key = (_arrays.dtype_name(value), len(value.shape))
        declaration = _tensor_declarations.get(key)
        if declaration is None and key[0] in _DECLARED_DTYPES:  # not fp8_e4m3: programs declare no FP8 tensors
            declaration = _tensor_declarations[key] = f"Tensor[{_DECLARED_DTYPES[key[0]]}, {key[1]}]"
        return (declaration, value) if declaration is not None else None
    if _is_bool(value):
        return "bool", bool(value)
    if isinstance(value, numbers.Integral):
        return "int", int(value)
    if isinstance(value, numbers.Real):
        return "float", float(value)
    return None


def _is_method(value):
    """A bound method of a function of the user's (not torch's or math's)."""
    return (isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType)
            and getattr(value.__func__, "__module__", None) not in _IMPORTABLE)


_LRU_CACHE_WRAPPER = type(functools.lru_cache(maxsize=None)(lambda: None))


def _unwrapped(value):
    """(attribute, function) of what a decorator that leaves a function unchanged wraps
    (functools.lru_cache and cache, torch.compile), else None."""
    if isinstance(value, _LRU_CACHE_WRAPPER):
        return "__wrapped__", value.__wrapped__
    if value is None or isinstance(value, (types.FunctionType, functools.partial, types.ModuleType)):
        return None
    try:
        inner = getattr(value, "_torchdynamo_orig_callable", None)  # what torch.compile returns
    except Exception:  # noqa: BLE001 - the user's object raised: not a wrapper
        return None
    return ("_torchdynamo_orig_callable", inner) if isinstance(inner, types.FunctionType) else None


def _usable(value):
    """Values a program can use as they are; reads of anything else go on into attributes and items."""
    if value is None or _is_bool(value) or isinstance(value, numbers.Number) or _arrays.is_array(value):
        return True
    if isinstance(value, types.ModuleType):
        return value.__name__ in _IMPORTABLE
    if isinstance(value, (types.FunctionType, functools.partial)):
        return True
    # Other callables only where they are imports (torch.where, math.exp); a callable object of the
    # user's (an nn.Module: `self.slopes`) is read on into its attributes.
    return callable(value) and getattr(value, "__module__", None) in _IMPORTABLE


class _Walk:
    """One walk over the mods and everything they reach. Both kinds collect the values to bind
    (in order) and the key; a writing walk also writes the program's lines."""

    def __init__(self, writing, avoid=frozenset()):
        self.writing = writing
        # Names the copied functions read as builtins or leave undefined (a first walk's
        # builtin_reads): a value declared so at the top would shadow them in every function.
        self.avoid = avoid
        self.builtin_reads = set()
        # The names the function whose reads are being walked binds (its scopes included): the
        # name a read is replaced by must not be one of them, or the copy would read the local.
        self.scope_locals = frozenset()
        self.depth = 0  # values being walked, one reached through another
        self.key = []
        self.values = []
        self.names = []         # writing: the declared name of each value, in order
        self.route = []         # the steps from the entry point to what is being walked
        self.checks = []        # (route, check, what it expects): _values_if_unchanged
        self.declarations = []  # Lines
        self.imports = []
        self.blocks = []        # [Lines] per function, lambda, partial or combinator
        self.used = set(_RESERVED)
        self.seen = {}          # id(function, partial or combinator) -> (visit number, emitted name)
        self.keep_alive = []    # the objects whose ids are keys of `seen`
        self.fallback = None

    def run(self, entries):
        self.assignments = []
        for role in ENTRY_POINTS:
            fn = entries.get(role)
            if fn is not None:
                self.key.append(role)
                self.route = [("entry", role)]
                self.assignments.append(Line(f"{role} = {self.value(fn, role, None, None)}"))
        return tuple(self.key)

    def program_lines(self):
        lines = self.declarations + self.imports
        for block in self.blocks:
            lines += [Line("")] + block
        return lines + [Line("")] + (self.assignments or [Line("mask_mod = noop_mask")])

    # --- names -------------------------------------------------------------------------------

    def fresh(self, preferred):
        # The program's lexer takes ASCII identifiers; keywords (None, True, class) name nothing.
        readable = preferred.isidentifier() and preferred.isascii() and not keyword.iskeyword(preferred)
        base = preferred if readable else "_capture"
        name, n = base, 2
        while name in self.used or name in self.avoid or name in self.scope_locals:
            name, n = f"{base}_{n}", n + 1
        self.used.add(name)
        return name

    def first_visit(self, obj, preferred):
        """(True, new name) the first time an object is reached, else (False, its name). A bound
        method is the pair of its function and object (each read of it makes a new one)."""
        key = (id(obj.__func__), id(obj.__self__)) if _is_method(obj) else id(obj)
        known = self.seen.get(key)
        if known is not None:
            self.key.append(("again", known[0]))
            if known[1] not in self.scope_locals:
                return False, known[1]
            # The reader binds that name itself: it reads the object under an alias.
            alias = self.fresh(preferred)
            self.blocks.append([Line(f"{alias} = {known[1]}")])
            return False, alias
        name = self.fresh(preferred)
        self.seen[key] = (len(self.seen), name)
        self.keep_alive.append(obj)
        return True, name

    # --- values ------------------------------------------------------------------------------

    def value(self, value, preferred, site, node):
        """The program expression for a value the mods read (declaring, importing or copying what
        it needs). `site`/`node`: the CodeInfo and node where it is read, for errors."""
        form = _bound_form(value)
        if form is not None:
            if form[0] == "int" and not _INT64_MIN <= form[1] <= _INT64_MAX:
                self.fail(site, node, f"{preferred!r} is {form[1]}: a runtime int must fit in 64 bits")
            return self.bound(form[1], form[0], preferred)
        if _arrays.is_array(value):
            self.fail(site, node, f"{preferred!r} has elements of type {value.dtype}, which flexjit cannot read")
        unwrapped = _unwrapped(value)
        if unwrapped is not None:  # a decorator that leaves the function as it was (docs/language.md)
            return self.value_at([("attr", unwrapped[0])], unwrapped[1], preferred, site, node)
        if _is_method(value):  # a new object at each read: its function and object are what stay
            self.checks.append((tuple(self.route), "method", (_weak(value.__func__), _weak(value.__self__))))
            return self.function(value, site, node)
        self.checks.append((tuple(self.route), "same", _weak(value)))  # the program was made from this object
        if value is None:
            self.key.append(None)
            return "None"
        if isinstance(value, types.ModuleType):
            return self.module(value, preferred, site, node)
        if isinstance(value, functools.partial):
            return self.partial(value, preferred, site, node)
        module = getattr(value, "__module__", None)
        if isinstance(value, types.FunctionType) and module == _FLEX_ATTENTION:
            return self.flex_attention_function(value, site, node)
        if isinstance(value, types.FunctionType) and module not in _IMPORTABLE:
            return self.function(value, site, node)
        if callable(value) and module in _IMPORTABLE:
            return self.imported(value, preferred, site, node)
        if site is None:  # the argument itself (mask_mod=, score_mod=, sink=)
            self.fail(site, node, f"{preferred} is {kind_of(value)}: flexjit takes a function or method "
                                  "(a def or lambda in a file), a functools.partial of one, or and_masks / or_masks "
                                  "of them")
        self.fail(site, node, f"{preferred!r} is {kind_of(value)}: a mod can read ints, floats, bools, "
                              "arrays, functions and modules from its closure and globals")

    def bound(self, value, declared, preferred):
        """A runtime scalar or captured tensor: declared, and bound to `value` at every call."""
        self.key.append((declared, preferred))
        self.values.append(value)
        self.checks.append((tuple(self.route), "bound", declared))
        if self.writing:
            name = self.fresh(preferred)
            self.names.append(name)
            self.declarations.append(Line(f"{name}: {declared}"))
            return name
        return preferred

    def module(self, module, preferred, site, node):
        if module.__name__ not in _IMPORTABLE:
            self.fail(site, node, f"module {module.__name__!r} has no meaning inside a kernel; a mod may use only "
                                  "math, torch, torch.nn.functional and torch.nn.attention.flex_attention")
        self.key.append(("module", module.__name__, preferred))
        if preferred == module.__name__:
            return preferred
        name = self.fresh(preferred)
        self.imports.append(Line(f"import {module.__name__} as {name}"))
        return name

    def imported(self, value, preferred, site, node):
        member = getattr(value, "__name__", None)
        if not member:
            self.fail(site, node, f"{preferred!r} cannot be imported into a kernel")
        self.key.append(("import", value.__module__, member, preferred))
        name = self.fresh(preferred)
        self.imports.append(Line(f"from {value.__module__} import {member} as {name}"))
        return name

    def partial(self, p, preferred, site, node):
        new, name = self.first_visit(p, f"_{preferred}_partial")
        if not new:
            return name
        self.key.append(("partial", len(p.args), tuple(p.keywords)))
        self.checks.append((tuple(self.route), "partial", (len(p.args), tuple(p.keywords))))
        func = self.value_at([("func", None)], p.func, "func", site, node)
        args = [self.value_at([("arg", i)], a, f"{name}_arg{i}", site, node) for i, a in enumerate(p.args)]
        args += [f"{key}={self.value_at([('keyword', key)], v, key, site, node)}" for key, v in p.keywords.items()]
        if not any(line.text == "from functools import partial" for line in self.imports):
            self.imports.append(Line("from functools import partial"))
        self.blocks.append([Line(f"{name} = partial({', '.join([func] + args)})")])
        return name

    def flex_attention_function(self, fn, site, node):
        """FlexAttention's own mask helpers: noop_mask, and the closures and_masks / or_masks return."""
        qualname = fn.__qualname__
        if qualname == "noop_mask":
            self.key.append("noop_mask")
            return "noop_mask"
        for combinator in ("and_masks", "or_masks"):
            if qualname.startswith(combinator + ".<locals>."):
                new, name = self.first_visit(fn, f"_{combinator[:-1]}")
                if not new:
                    return name
                freevars = fn.__code__.co_freevars
                cell = freevars.index("mask_mods") if "mask_mods" in freevars else None
                masks = fn.__closure__[cell].cell_contents if cell is not None else ()
                self.key.append((combinator, len(masks)))
                parts = [self.value_at([("closure", cell), ("item", j)], m, "mask", site, node)
                         for j, m in enumerate(masks)]
                self.blocks.append([Line(f"{name} = {combinator}({', '.join(parts)})")])
                return name
        return self.imported(fn, fn.__name__, site, node)

    # --- functions ---------------------------------------------------------------------------

    def function(self, fn, site, node):
        """A function (or a bound method: its function with self's reads resolved on its object)
        copied into the program; its name there."""
        try:
            info = code_info(fn.__func__ if _is_method(fn) else fn)
        except SourceUnreadable as e:
            self.fail(site, node, f"the source of {fn.__qualname__!r} cannot be read: {e}")
        if info is None:
            filename = fn.__code__.co_filename
            if filename.startswith("<"):  # "<stdin>", "<string>": no file behind it
                self.fail(site, node, f"the source of {fn.__qualname__!r} is not available (a function typed into "
                                      "an interactive session or made by exec); define it in a file")
            self.fail(site, node, f"the source of {fn.__qualname__!r} is not in {filename} as it is now (the file "
                                  "was moved, deleted or edited since the function was defined)")
        new, name = self.first_visit(fn, "_lambda" if info.is_lambda else fn.__name__)
        if not new:
            return name
        return self.copied_function(fn, info, name)

    def copied_function(self, fn, info, name):
        self.key.append(("function", fn.__code__, fn.__code__.co_filename, fn.__name__, _is_method(fn)))
        self.checks.append((tuple(self.route), "code", fn.__code__))
        if self.fallback is None:
            self.fallback = (info.filename, info.node.lineno)
        replacements = {}
        if self.writing and not info.is_lambda and name != info.node.name:
            lineno = info.node.lineno
            start = info.text(lineno).index(info.node.name, info.col(lineno, info.node.col_offset) + 3)
            replacements.setdefault(lineno, []).append((start, start + len(info.node.name), name))
        reads = {}  # (name, steps taken) -> the program expression of that read in this function
        if _is_method(fn):
            self.method_self(fn, info, reads, replacements)
        for read in info.reads:
            found, value, where = _lookup(fn, read.name)
            if not found:  # a builtin, or undefined: the compiler reports it where it is used
                self.checks.append((tuple(self.route), "undefined", read.name))
                self.builtin_reads.add(read.name)
                continue
            self.read(info, read, value, where, reads, replacements)
        if self.writing:
            self.blocks.append(self.copy(info, name, replacements))
        return name

    def method_self(self, method, info, reads, replacements):
        """A bound method's first parameter: dropped from the copy's parameters, and each of its
        reads (self.window, self.cfg["w"]) taken on the method's object as a free name's are."""
        n = info.node
        params = n.args.posonlyargs + n.args.args
        self_reads = info.first_parameter_reads()
        if self_reads is None:
            self.fail(info, n, "a method given as a mod needs its object as its first parameter, never assigned")
        if self.writing:
            first = params[0]
            text = info.text(first.lineno)
            start = info.col(first.lineno, first.col_offset)
            if len(params) > 1 and params[1].lineno == first.lineno:
                stop = info.col(first.lineno, params[1].col_offset)
            else:  # the next parameter on a line of its own: `self,` and what follows it on its line
                after = info.col(first.lineno, first.end_col_offset)
                rest = text[after:].lstrip()
                if len(params) > 1 and not (rest == "," or rest.startswith(",") and rest[1:].strip()[:1] in ("", "#")):
                    self.fail(info, first, f"write {first.arg!r} and the parameter after it on one line")
                stop = len(text) if len(params) > 1 else after
            replacements.setdefault(first.lineno, []).append((start, stop, ""))
        for read in self_reads:
            self.read(info, read, method.__self__, ("attr", "__self__"), reads, replacements, whole=False)

    def read(self, info, read, value, where, reads, replacements, whole=True):
        """One read of a copied function: `value` (reached by the route step `where`) followed
        through the read's attribute and item steps until the program can use it, declared or
        copied once per function (`reads`), and its expression put in place of the read.
        whole=False: the name itself may not be the value (a method's self)."""
        taken = 0
        while not _usable(value) and taken < len(read.steps):
            value = self.step(info, read, taken, value)
            taken += 1
        if taken == 0 and not whole:
            self.fail(info, read.nodes[0], f"{read.name!r} is read as a whole; a mod may read its attributes and "
                                           f"items ({read.name}.window) only")
        expr_node = read.nodes[taken]
        read_key = (read.name, taken, tuple(read.steps[:taken]))
        if read_key not in reads:
            outer, self.scope_locals = self.scope_locals, info.local_names
            try:
                reads[read_key] = self.value_at([where] + list(read.steps[:taken]), value,
                                                _preferred_name(read, taken), info, expr_node)
            finally:
                self.scope_locals = outer
        if self.writing:
            self.replace(info, expr_node, reads[read_key], replacements)

    def value_at(self, steps, value, preferred, site, node):
        """self.value of what `steps` lead to from the object being walked."""
        if self.depth >= _MAX_FUNCTION_DEPTH:
            self.fail(site, node, f"functions reach one another more than {_MAX_FUNCTION_DEPTH} deep (the mods' "
                                  "calls, closures, wrappers and combinators); a kernel inlines every call")
        depth = len(self.route)
        self.route.extend(steps)
        self.depth += 1
        try:
            return self.value(value, preferred, site, node)
        finally:
            self.depth -= 1
            del self.route[depth:]

    def step(self, info, read, taken, value):
        kind, what = read.steps[taken]
        try:
            return getattr(value, what) if kind == "attr" else value[what]
        except Exception as e:  # the user's object raised: say where
            self.fail(info, read.nodes[taken + 1], f"reading {_text_of(read, taken + 1)!r} raised "
                                                   f"{type(e).__name__}: {e}")

    def replace(self, info, expr_node, expr, replacements):
        if expr_node.lineno != expr_node.end_lineno:
            self.fail(info, expr_node, "flexjit reads a value split over several lines only as a whole name")
        start = info.col(expr_node.lineno, expr_node.col_offset)
        stop = info.col(expr_node.lineno, expr_node.end_col_offset)
        if info.text(expr_node.lineno)[start:stop] != expr:
            replacements.setdefault(expr_node.lineno, []).append((start, stop, expr))

    def copy(self, info, name, replacements):
        """The function's lines as the program has them: a def dedented to the top level, a lambda
        as `name = (lambda ...)`."""
        n = info.node
        out = []
        if info.is_lambda:
            for lineno in range(n.lineno, n.end_lineno + 1):
                start = info.col(lineno, n.col_offset) if lineno == n.lineno else 0
                end = info.col(lineno, n.end_col_offset) if lineno == n.end_lineno else None
                out.append(copied_line(info.text(lineno), info.filename, lineno, start, replacements.get(lineno, []),
                                       end, prefix=f"{name} = (" if lineno == n.lineno else "",
                                       suffix=")" if lineno == n.end_lineno else ""))
            return out
        indent = info.col(n.lineno, n.col_offset)
        for lineno in range(n.lineno, n.end_lineno + 1):
            text = info.text(lineno)
            start = min(indent, len(text) - len(text.lstrip()))
            out.append(copied_line(text, info.filename, lineno, start, replacements.get(lineno, [])))
        return out

    def fail(self, info, node, message):
        if info is None or node is None:
            raise CompileError(f"error: {message}", [])
        line = node.lineno
        col = info.col(line, node.col_offset)
        raise CompileError(format_block("error", info.filename, line, col, message),
                           [Diagnostic("error", info.filename, line, col + 1, message)])


def _lookup(fn, name):
    """(found, value, route step) of a free name as Python finds it: the closure, then the globals."""
    code = fn.__code__
    if name in code.co_freevars:
        cell = code.co_freevars.index(name)
        try:
            return True, fn.__closure__[cell].cell_contents, ("closure", cell)
        except ValueError:
            return False, None, None  # not assigned yet: the compiler reports the name
    if name in fn.__globals__:
        return True, fn.__globals__[name], ("global", name)
    return False, None, None


def _text_of(read, taken):
    out = read.name
    for kind, what in read.steps[:taken]:
        out += f".{what}" if kind == "attr" else f"[{what!r}]"
    return out


def _preferred_name(read, taken):
    """A readable name for a captured read: `self.alibi_slopes` -> alibi_slopes."""
    if taken == 0:
        return read.name
    kind, what = read.steps[taken - 1]
    if kind == "attr":
        return what
    key = str(what)
    return key if key.isidentifier() else f"{_preferred_name(read, taken - 1)}_{key}"
