"""Python mods, as FlexAttention takes them (score_mod, mask_mod; functions, nested functions,
lambdas, functools.partial, and_masks / or_masks / noop_mask, helpers they call), turned into one
flexjit program.

Each function's own source (found with inspect's means: its file through linecache, its node with
ast) is copied into the program as written. What the code reads from outside is looked up in its
closure and globals at every call: ints, floats and bools become runtime scalars, arrays captured
tensors (a declaration each, bound by value), so that new values never change the program; modules
stay imports; functions are copied too. An expression such as `self.slopes` or `cfg["window"]`
whose base is neither is evaluated in Python and captured as a whole. A map from each program line
back to the user's file lets diagnostics point at the user's code."""

import ast
import builtins
import functools
import linecache
import numbers
import types

from . import _arrays
from ._source_map import Line, char_col, copied_line, format_block
from .errors import CompileError, Diagnostic

ENTRY_POINTS = ("mask_mod", "score_mod", "sink")

# What a program may import (docs/language.md, "Imports").
_IMPORTABLE = {"torch", "math", "torch.nn.functional", "torch.nn.attention.flex_attention", "functools", "typing",
               "typing_extensions"}
_FLEX_ATTENTION = "torch.nn.attention.flex_attention"
# Names the program's own lines use; a user's value never takes them.
_RESERVED = set(ENTRY_POINTS) | {"partial", "torch", "math", "and_masks", "or_masks", "noop_mask", "Tensor"}
_DECLARED_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "f32": "float32", "f64": "float64", "i8": "int8",
                    "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "boolean": "bool"}


class Translation:
    """The program text, where its lines came from, and the values a call binds."""

    def __init__(self, lines, bind, fallback):
        self.lines = lines
        self.text = "".join(line.text + "\n" for line in lines)
        self.bind = bind
        self.fallback = fallback  # (file, line) for diagnostics on lines flexjit wrote


def translate(**entries):
    """A Translation of the given entry points (mask_mod=, score_mod=, sink=; None: not defined).
    Raises CompileError pointing at the user's code for what cannot be translated."""
    return _Translator().run(entries)


# file name -> (the lines linecache gave, their ast, child -> parent)
_parsed_files = {}


def _parsed(filename, module_globals):
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        return None
    cached = _parsed_files.get(filename)
    if cached is not None and cached[0] is lines:
        return cached
    tree = ast.parse("".join(lines), filename)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    _parsed_files[filename] = (lines, tree, parents)
    return _parsed_files[filename]


def _is_bool(value):
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def _capturable(value):
    """Values a program can use as they are; anything else is looked into (attributes, items)."""
    if value is None or _is_bool(value) or isinstance(value, numbers.Number) or _arrays.is_array(value):
        return True
    if isinstance(value, types.ModuleType):
        return value.__name__ in _IMPORTABLE
    return callable(value)


class _Site:
    """A function being copied: its object, code, file lines and node."""

    def __init__(self, fn, filename, lines, node, parents):
        self.fn = fn
        self.filename = filename
        self.lines = lines
        self.node = node
        self.parents = parents

    def text(self, lineno):
        return self.lines[lineno - 1].rstrip("\n")

    def col(self, lineno, byte_col):
        return char_col(self.text(lineno), byte_col)


class _Translator:
    def __init__(self):
        self.declarations = []  # Lines
        self.imports = []       # Lines
        self.blocks = []        # [Lines] per function, lambda, partial or combinator
        self.bind = {}
        self.used = set(_RESERVED)
        self.functions = {}     # id(function or partial) -> emitted name
        self.keep_alive = []    # objects whose ids are keys above
        self.fallback = None

    # --- entry -------------------------------------------------------------------------------

    def run(self, entries):
        assignments = []
        for role in ENTRY_POINTS:
            fn = entries.get(role)
            if fn is None:
                continue
            if not callable(fn):
                raise TypeError(f"{role} must be a function, got {type(fn).__name__}")
            expr = self.value(fn, role, None, None)
            assignments.append(Line(f"{role} = {expr}"))
        if not assignments:
            assignments.append(Line("mask_mod = noop_mask"))
        lines = self.declarations + self.imports
        for block in self.blocks:
            lines += [Line("")] + block
        lines += [Line("")] + assignments
        return Translation(lines, self.bind, self.fallback or ("<flexjit>", 0))

    # --- names -------------------------------------------------------------------------------

    def fresh(self, preferred):
        base = preferred if preferred.isidentifier() else "_capture"
        name, n = base, 2
        while name in self.used:
            name, n = f"{base}_{n}", n + 1
        self.used.add(name)
        return name

    # --- values ------------------------------------------------------------------------------

    def value(self, value, preferred, site, node):
        """The program expression for a value a function reads (declaring, importing or copying
        what it needs). `site`/`node`: where it is read, for errors (None for entry points)."""
        if value is None:
            return "None"
        if _is_bool(value):
            return self.scalar(bool(value), "bool", preferred)
        if isinstance(value, numbers.Integral):
            return self.scalar(int(value), "int", preferred)
        if isinstance(value, numbers.Real):
            return self.scalar(float(value), "float", preferred)
        if _arrays.is_array(value):
            return self.tensor(value, preferred, site, node)
        if isinstance(value, types.ModuleType):
            return self.module(value, preferred, site, node)
        if isinstance(value, functools.partial):
            return self.partial(value, preferred, site, node)
        if isinstance(value, types.FunctionType):
            module = getattr(value, "__module__", None)
            if module == _FLEX_ATTENTION:
                return self.flex_attention_function(value, site, node)
            if module in _IMPORTABLE:
                return self.imported(value, preferred, site, node)
            return self.function(value, site, node)
        if callable(value) and getattr(value, "__module__", None) in _IMPORTABLE:
            return self.imported(value, preferred, site, node)
        self.fail(site, node, f"{preferred!r} is a {type(value).__name__}: a mod can read ints, floats, bools, "
                              "arrays, functions and modules from its closure and globals")

    def scalar(self, value, kind, preferred):
        name = self.fresh(preferred)
        self.declarations.append(Line(f"{name}: {kind}"))
        self.bind[name] = value
        return name

    def tensor(self, value, preferred, site, node):
        dtype = _arrays.dtype_name(value)
        if dtype is None:
            self.fail(site, node, f"{preferred!r} has elements of type {value.dtype}, which flexjit cannot read")
        name = self.fresh(preferred)
        self.declarations.append(Line(f"{name}: Tensor[{_DECLARED_DTYPES[dtype]}, {len(value.shape)}]"))
        self.bind[name] = value
        return name

    def module(self, module, preferred, site, node):
        if module.__name__ not in _IMPORTABLE:
            self.fail(site, node, f"module {module.__name__!r} has no meaning inside a kernel; a mod may use only "
                                  "math, torch, torch.nn.functional and torch.nn.attention.flex_attention")
        if preferred == module.__name__:
            return preferred
        name = self.fresh(preferred)
        self.imports.append(Line(f"import {module.__name__} as {name}"))
        return name

    def imported(self, value, preferred, site, node):
        member = getattr(value, "__name__", None)
        if not member:
            self.fail(site, node, f"{preferred!r} cannot be imported into a kernel")
        name = self.fresh(preferred)
        self.imports.append(Line(f"from {value.__module__} import {member} as {name}"))
        return name

    def partial(self, p, preferred, site, node):
        known = self.functions.get(id(p))
        if known:
            return known
        name = self.fresh(f"_{preferred}_partial")
        self.functions[id(p)] = name
        self.keep_alive.append(p)
        func = self.value(p.func, "func", site, node)
        args = [self.value(a, f"{name}_arg{i}", site, node) for i, a in enumerate(p.args)]
        args += [f"{key}={self.value(v, key, site, node)}" for key, v in p.keywords.items()]
        if not any(line.text.startswith("from functools import partial") for line in self.imports):
            self.imports.append(Line("from functools import partial"))
        self.blocks.append([Line(f"{name} = partial({', '.join([func] + args)})")])
        return name

    def flex_attention_function(self, fn, site, node):
        """FlexAttention's own mask helpers: noop_mask, and the closures and_masks / or_masks return."""
        qualname = fn.__qualname__
        if qualname == "noop_mask":
            return "noop_mask"
        for combinator in ("and_masks", "or_masks"):
            if qualname.startswith(combinator + ".<locals>."):
                known = self.functions.get(id(fn))
                if known:
                    return known
                name = self.fresh(f"_{combinator[:-1]}")
                self.functions[id(fn)] = name
                self.keep_alive.append(fn)
                cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
                parts = [self.value(m, "mask", site, node) for m in cells.get("mask_mods", ())]
                self.blocks.append([Line(f"{name} = {combinator}({', '.join(parts)})")])
                return name
        return self.imported(fn, fn.__name__, site, node)

    # --- functions ---------------------------------------------------------------------------

    def function(self, fn, site, node):
        known = self.functions.get(id(fn))
        if known:
            return known
        code = fn.__code__
        parsed = _parsed(code.co_filename, fn.__globals__)
        if parsed is None:
            self.fail(site, node, f"the source of {fn.__qualname__!r} is not available (a function typed into an "
                                  "interactive session or made by exec); define it in a file")
        lines, tree, parents = parsed
        fn_node = _function_node(code, tree)
        if fn_node is None:
            self.fail(site, node, f"the definition of {fn.__qualname__!r} was not found in {code.co_filename}")
        here = _Site(fn, code.co_filename, lines, fn_node, parents)
        if self.fallback is None:
            self.fallback = (code.co_filename, fn_node.lineno)
        is_lambda = isinstance(fn_node, ast.Lambda)
        name = self.fresh("_lambda" if is_lambda else fn.__name__)
        self.functions[id(fn)] = name
        self.keep_alive.append(fn)
        replacements = {}
        if not is_lambda and name != fn_node.name:
            text = here.text(fn_node.lineno)
            start = text.index(fn_node.name, here.col(fn_node.lineno, fn_node.col_offset) + 3)
            replacements.setdefault(fn_node.lineno, []).append((start, start + len(fn_node.name), name))
        for expr_node, expr in self.free_values(here):
            if expr_node.lineno != expr_node.end_lineno:
                self.fail(here, expr_node, "flexjit reads a value split over several lines only as a whole name")
            start = here.col(expr_node.lineno, expr_node.col_offset)
            stop = here.col(expr_node.lineno, expr_node.end_col_offset)
            if here.text(expr_node.lineno)[start:stop] != expr:
                replacements.setdefault(expr_node.lineno, []).append((start, stop, expr))
        self.blocks.append(self.copy(here, name, replacements))
        return name

    def copy(self, here, name, replacements):
        """The function's lines as the program has them: a def dedented to the top level, a lambda
        as `name = (lambda ...)`."""
        n = here.node
        out = []
        if isinstance(n, ast.Lambda):
            for lineno in range(n.lineno, n.end_lineno + 1):
                text = here.text(lineno)
                start = here.col(lineno, n.col_offset) if lineno == n.lineno else 0
                end = here.col(lineno, n.end_col_offset) if lineno == n.end_lineno else None
                out.append(copied_line(text, here.filename, lineno, start, replacements.get(lineno, []), end,
                                       prefix=f"{name} = (" if lineno == n.lineno else "",
                                       suffix=")" if lineno == n.end_lineno else ""))
            return out
        indent = here.col(n.lineno, n.col_offset)
        for lineno in range(n.lineno, n.end_lineno + 1):
            text = here.text(lineno)
            start = min(indent, len(text) - len(text.lstrip()))
            out.append(copied_line(text, here.filename, lineno, start, replacements.get(lineno, [])))
        return out

    def free_values(self, here):
        """(node, program expression) for each read of a name the function does not bind itself
        and Python would find in its closure or globals."""
        local = _local_names(here.node)
        code = here.fn.__code__
        seen = {}
        for name_node in _loads(here.node):
            if name_node.id in local:
                continue
            found, value = _lookup(here.fn, code, name_node.id)
            if not found:
                continue  # a builtin, or undefined: the compiler reports it where it is used
            expr_node, value = self.chain(here, name_node, value)
            key = ast.dump(expr_node)
            if key not in seen:
                preferred = _preferred_name(expr_node)
                seen[key] = self.value(value, preferred, here, expr_node)
            yield expr_node, seen[key]

    def chain(self, here, node, value):
        """Walks `self.a.b["k"]` outward from its base while the value is not one a program can use."""
        while not _capturable(value):
            parent = here.parents.get(node)
            try:
                if isinstance(parent, ast.Attribute) and parent.value is node:
                    value = getattr(value, parent.attr)
                elif isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.slice,
                                                                                            ast.Constant):
                    value = value[parent.slice.value]
                else:
                    break
            except Exception as e:  # the user's object raised: say where
                self.fail(here, parent, f"reading {ast.unparse(parent)!r} raised {type(e).__name__}: {e}")
            node = parent
        return node, value

    def fail(self, site, node, message):
        if site is None or node is None:
            raise CompileError(f"error: {message}", [])
        line = node.lineno
        col = site.col(line, node.col_offset)
        raise CompileError(format_block("error", site.filename, line, col, message),
                           [Diagnostic("error", site.filename, line, col + 1, message)])


def _function_node(code, tree):
    """The def or lambda node of a code object in its module's tree."""
    first = code.co_firstlineno
    if code.co_name == "<lambda>":
        spans = {(p[0], p[1], p[2], p[3]) for p in code.co_positions()} if hasattr(code, "co_positions") else None
        lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == first]
        for n in lambdas:
            body = n.body
            if spans is None or (body.lineno, body.end_lineno, body.col_offset, body.end_col_offset) in spans:
                return n
        return lambdas[0] if len(lambdas) == 1 else None
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == code.co_name:
            start = n.decorator_list[0].lineno if n.decorator_list else n.lineno
            if first in (start, n.lineno):
                return n
    return None


def _local_names(fn_node):
    names = set()
    for n in ast.walk(fn_node):
        if isinstance(n, ast.arg):
            names.add(n.arg)
        elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fn_node:
            names.add(n.name)
    return names


def _loads(fn_node):
    """Name reads in the function's defaults and body; annotations are the compiler's to check."""
    roots = list(fn_node.args.defaults) + [d for d in fn_node.args.kw_defaults if d is not None]
    roots += fn_node.body if isinstance(fn_node.body, list) else [fn_node.body]
    stack = roots[::-1]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            yield n
        children = []
        for field, child in ast.iter_fields(n):
            if field in ("annotation", "returns", "decorator_list"):
                continue
            if isinstance(child, ast.AST):
                children.append(child)
            elif isinstance(child, list):
                children.extend(c for c in child if isinstance(c, ast.AST))
        stack.extend(reversed(children))


def _lookup(fn, code, name):
    if name in code.co_freevars:
        cell = fn.__closure__[code.co_freevars.index(name)]
        try:
            return True, cell.cell_contents
        except ValueError:
            return False, None  # not yet assigned: the compiler reports the name
    if name in fn.__globals__:
        return True, fn.__globals__[name]
    return False, getattr(builtins, name, None)


def _preferred_name(expr_node):
    """A readable name for a captured expression: `self.alibi_slopes` -> alibi_slopes."""
    if isinstance(expr_node, ast.Name):
        return expr_node.id
    if isinstance(expr_node, ast.Attribute):
        return expr_node.attr
    if isinstance(expr_node, ast.Subscript) and isinstance(expr_node.slice, ast.Constant):
        key = str(expr_node.slice.value)
        return key if key.isidentifier() else f"{_preferred_name(expr_node.value)}_{key}"
    return "_capture"
