"""What the mods' translation needs of a Python function's source, found once per code object: its
file's lines, its def or lambda node, and each read of a name the function does not bind, with
the attribute and constant-item accesses written after it (`self.cfg["window"]`)."""

import ast
import linecache
import threading

from ._source_map import char_col


class Read:
    """One read of a free name: nodes[0] is the Name, nodes[i] the access steps[i - 1] applied."""

    __slots__ = ("name", "nodes", "steps")

    def __init__(self, name, nodes, steps):
        self.name = name
        self.nodes = nodes
        self.steps = steps  # ("attr", name) or ("item", constant)


class CodeInfo:
    def __init__(self, filename, lines, node, reads, parents):
        self.filename = filename
        self.lines = lines
        self.node = node
        self.reads = reads
        self.is_lambda = isinstance(node, ast.Lambda)
        # Every name the function or a scope inside it binds: what a captured value's name in the
        # program must not be, or the copied lines would read the local instead.
        self.local_names = _bound_names(node)
        self._parents = parents
        self._first_parameter_reads = None

    def first_parameter_reads(self):
        """A method's reads of its first parameter (self), as `reads` gives free names: where
        neither the function nor a scope inside it binds that name again. None when the function
        has no positional parameter or assigns to it."""
        if self._first_parameter_reads is None:
            params = self.node.args.posonlyargs + self.node.args.args
            if not params:
                return None
            name = params[0].arg
            stores = [n for n in ast.walk(self.node) if isinstance(n, ast.Name) and n.id == name
                      and not isinstance(n.ctx, ast.Load)]
            if stores:
                return None
            self._first_parameter_reads = _reads(self.node, self._parents, parameter=name)
        return self._first_parameter_reads

    def text(self, lineno):
        return self.lines[lineno - 1].rstrip("\n")

    def col(self, lineno, byte_col):
        return char_col(self.text(lineno), byte_col)


class SourceUnreadable(Exception):
    """The file a function comes from cannot be parsed now (edited after import, or not Python)."""


_lock = threading.Lock()
_files = {}  # file name -> (the lines linecache gave, their ast, child -> parent)
_infos = {}  # (code object, file name) -> CodeInfo
_compiled = {}  # file name -> (the lines linecache gave, the module code compiled from them)


def code_info(fn):
    """The CodeInfo of a Python function, or None when its source cannot be read (a function typed
    into an interactive session, made by exec) or its node not found."""
    code = fn.__code__
    key = (code, code.co_filename)  # equal code objects can come from two files
    info = _infos.get(key)
    if info is not None:
        return info
    with _lock:
        lines = linecache.getlines(code.co_filename, fn.__globals__)
        if not lines:
            return None
        parsed = _files.get(code.co_filename)
        if parsed is None or parsed[0] is not lines:
            try:
                tree = ast.parse("".join(lines), code.co_filename)
            except (SyntaxError, ValueError) as e:  # ValueError: NUL bytes
                where = f" at line {e.lineno}" if getattr(e, "lineno", None) else ""
                raise SourceUnreadable(f"{code.co_filename} does not parse now ({getattr(e, 'msg', e)}{where}); was "
                                       "it edited after the function was defined?") from None
            parents = {child: n for n in ast.walk(tree) for child in ast.iter_child_nodes(n)}
            parsed = _files[code.co_filename] = (lines, tree, parents)
        node = _function_node(code, parsed[1])
        if node is None:
            return None
        if not _same_code(code, node, parsed, fn.__globals__):
            raise SourceUnreadable(f"{code.co_filename} has changed since {fn.__qualname__!r} was defined (its "
                                   "lines now compile to other code); reload the module or restart")
        info = _infos[key] = CodeInfo(code.co_filename, lines, node, _reads(node, parsed[2]), parsed[2])
        return info


def _same_code(code, node, parsed, fn_globals):
    """Whether the file's text, as linecache has it now, still compiles the function to the code it
    runs (else the copy would be of lines Python does not run): the code object compiled at the
    node's place equal to the function's, constants and nested code included. Modules whose asserts
    pytest rewrote are taken as they are."""
    if "@pytest_ar" in fn_globals:
        return True
    lines, tree = parsed[0], parsed[1]
    compiled = _compiled.get(code.co_filename)
    if compiled is None or compiled[0] is not lines:
        try:
            module = compile(tree, code.co_filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):  # parsed, but no longer compiles: not what Python runs
            module = None
        compiled = _compiled[code.co_filename] = (lines, module)
    if compiled[1] is None:
        return False
    body = getattr(node, "body", None)
    span = None if isinstance(body, list) or body is None else (body.lineno, body.end_lineno, body.col_offset,
                                                                 body.end_col_offset)
    stack = [compiled[1]]
    while stack:
        candidate = stack.pop()
        if candidate.co_name == code.co_name and candidate.co_firstlineno == code.co_firstlineno and (
                span is None or not hasattr(candidate, "co_positions") or span in set(candidate.co_positions())):
            return _equal_code(candidate, code)
        stack.extend(c for c in candidate.co_consts if isinstance(c, type(code)))
    return False


def _equal_code(a, b):
    """Code objects that do the same: bytecode, names, constants (nested code compared alike)."""
    if (a.co_code, a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars) != \
            (b.co_code, b.co_names, b.co_varnames, b.co_freevars, b.co_cellvars) or len(a.co_consts) != len(b.co_consts):
        return False
    code_type = type(a)
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, code_type) or isinstance(y, code_type):
            if not (isinstance(x, code_type) and isinstance(y, code_type) and _equal_code(x, y)):
                return False
        elif type(x) is not type(y) or repr(x) != repr(y):  # repr: -0.0, nan and nested tuples as written
            return False
    return True


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


def _reads(fn_node, parents, parameter=None):
    """The reads of names the function does not bind (free); with `parameter`, the reads of that
    parameter of the function where no scope inside it binds the name again."""
    scopes = {}  # scope node -> the names it binds
    out = []
    for name_node in _loads(fn_node):
        if parameter is None:
            if _bound_in_a_scope(name_node, fn_node, parents, scopes):
                continue
        elif name_node.id != parameter or _bound_in_a_scope(name_node, fn_node, parents, scopes, below=fn_node):
            continue
        nodes, steps = [name_node], []
        while True:
            node, parent = nodes[-1], parents.get(nodes[-1])
            if isinstance(parent, ast.Attribute) and parent.value is node:
                steps.append(("attr", parent.attr))
            elif isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.slice, ast.Constant):
                steps.append(("item", parent.slice.value))
            else:
                break
            nodes.append(parent)
        out.append(Read(name_node.id, nodes, steps))
    return out


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp)


def _bound_names(node):
    """The names bound anywhere in a function, its nested scopes included."""
    return set().union(*(_scope_names(n) for n in ast.walk(node) if isinstance(n, _SCOPES)))


def _scope_names(scope):
    """The names one scope binds itself: its parameters, and the names stored or defined in it
    outside the scopes nested in it."""
    names = {a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg)} if hasattr(scope, "args") else set()
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names.add(n.id)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(n.name)
        if isinstance(n, _SCOPES):
            continue
        stack.extend(ast.iter_child_nodes(n))
    if isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        for comp in scope.generators:  # the targets, written inside the comprehension's node
            names |= {t.id for t in ast.walk(comp.target) if isinstance(t, ast.Name)}
    return names


def _bound_in_a_scope(name_node, fn_node, parents, scopes, below=None):
    """Whether a name read is bound by the function or by a scope inside it that holds the read
    (with below=fn_node: by a scope inside it only)."""
    node, child = name_node, None
    while node is not None:
        if node is below:
            return False
        # A scope's parameter defaults and decorators are evaluated in the scope around it.
        evaluated_outside = child is not None and (child is getattr(node, "args", None)
                                                   or child in getattr(node, "decorator_list", ()))
        if isinstance(node, _SCOPES) and not evaluated_outside:
            names = scopes.get(node)
            if names is None:
                names = scopes[node] = _scope_names(node)
            if name_node.id in names:
                return True
        if node is fn_node:
            return False
        child, node = node, parents.get(node)
    return False


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
