"""Freshness by definition: a hash of the definitions a view function can reach, not of the files they sit in.

A shipped result stays valid while nothing it was computed from has changed. "What it was computed from" is
read statically from the source (``ast``), never by importing it:

* the view function, what it calls, the classes and constants it uses, followed through imports inside
  ``toymodels`` (``from .core import f``, ``from toymodels.x import core`` then ``core.f``, package re-exports);
* each definition as its syntax tree, with docstrings, comments, annotations of functions and ``@bounded``
  declarations left out (they never change a number): rewording a docstring, a verdict or a bound stales
  nothing;
* references to other definitions replaced by a name that carries the topic and the definition's name but not
  the file (``superposition:train``), so moving a function between the files of one topic keeps its hash;
* conservative wherever the source is dynamic: ``importlib.import_module``, ``__import__``, ``getattr`` on a
  module, ``globals()`` or a star import make the whole module (its bytes) part of the hash; a reference
  that cannot be resolved to a definition makes its module's bytes part of it.

``definitions(fn)`` gives name -> hash of every definition reached (recorded beside a shipped bundle so that
``precompute --check`` can name the one that changed); ``definition_hash(fn)`` the hash of them all.

Build time only: ``precompute`` stamps a bundle with them and ``precompute --check`` (``make test``, CI) compares
the stamp with today's source. The web server never reads source: it serves the bundles the build vouched for.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

PACKAGE = "toymodels"
PACKAGE_DIR = Path(__file__).resolve().parent

_DYNAMIC_CALLS = {"import_module", "__import__", "globals", "vars", "reload"}


def topic_key(module_name: str) -> str:
    """The topic a module belongs to: ``toymodels.superposition.core`` -> ``superposition`` (one topic, one
    package); a module outside ``toymodels`` is its own topic."""
    parts = module_name.split(".")
    if parts[0] != PACKAGE:
        return module_name
    if len(parts) == 1:
        return PACKAGE
    return parts[1]


# --------------------------------------------------------------------------- reading modules


@dataclass
class _Module:
    name: str
    path: Path
    source: bytes
    is_package: bool
    defs: dict[str, list[ast.stmt]] = field(default_factory=dict)   # name -> top-level statements binding it
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local -> (module, attr | None)
    prelude: list[ast.stmt] = field(default_factory=list)           # top-level statements binding nothing
    star: bool = False                                              # has `from toymodels... import *`


def _module_path(name: str) -> Path | None:
    """The source file of a module, without importing it (``toymodels.*`` from the package folder; other
    modules, such as tests, through the import system's finder or ``sys.modules``)."""
    parts = name.split(".")
    if parts[0] == PACKAGE:
        base = PACKAGE_DIR.joinpath(*parts[1:])
        for cand in (base.with_suffix(".py"), base / "__init__.py"):
            if cand.is_file():
                return cand
        return None
    mod = sys.modules.get(name)
    path = getattr(mod, "__file__", None)
    if path is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        path = spec.origin if spec is not None and spec.has_location else None
    return Path(path) if path and str(path).endswith(".py") and Path(path).is_file() else None


_CACHE: dict[str, tuple[tuple, _Module]] = {}  # module -> (its file's stamp, the module as read)
# The contract and the plumbing (bounds, errors, progress, views, claims; storage, this module, the registry,
# the command line) validate, store and report; they never compute a number, so what a result's hash follows
# stops there (a view that caches its parts through the store reaches those parts, not the store). Every other
# module of the package is followed.
CONTRACT = frozenset(f"{PACKAGE}.{m}" for m in ("topic", "errors", "claims", "store", "freshness", "shipped",
                                               "registry", "cli", "threads"))


def _read(name: str) -> _Module | None:
    if name in CONTRACT:
        return None
    path = _module_path(name)
    if path is None:
        return None
    st = path.stat()
    stamp = (str(path), st.st_mtime_ns, st.st_size)
    hit = _CACHE.get(name)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    module = _parse(name, path, path.read_bytes())
    _CACHE[name] = (stamp, module)
    return module


def _absolute(module: _Module, level: int, target: str | None) -> str:
    if not level:
        return target or ""
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    base = package.split(".")
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _parse(name: str, path: Path, source: bytes) -> _Module:
    tree = ast.parse(source)
    module = _Module(name, path, source, path.name == "__init__.py")
    body = list(tree.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    for node in body:
        _bind_statement(module, node)
    return module


def _is_main_block(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":``: runs only as a script, never when a view's module is imported."""
    t = node.test if isinstance(node, ast.If) else None
    return (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__"
            and len(t.comparators) == 1 and isinstance(t.comparators[0], ast.Constant)
            and t.comparators[0].value == "__main__")


def _bind_statement(module: _Module, node: ast.stmt) -> None:
    if _is_main_block(node):
        return
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        _bind_import(module, node)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        module.defs.setdefault(node.name, []).append(node)
    else:
        for inner in ast.walk(node):  # imports inside `try:` / `if` blocks bind names too
            if isinstance(inner, (ast.Import, ast.ImportFrom)):
                _bind_import(module, inner)
        names = _bound_names(node)
        for n in names:
            module.defs.setdefault(n, []).append(node)
        if not names and any(isinstance(inner, ast.Call) for inner in ast.walk(node)):
            module.prelude.append(node)  # runs at import and may set state (a default dtype, a seed)


def _bind_import(module: _Module, node: ast.Import | ast.ImportFrom) -> None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] != PACKAGE:
                continue
            if alias.asname:
                module.imports[alias.asname] = (alias.name, None)
            else:
                module.imports[PACKAGE] = (PACKAGE, None)
        return
    target = _absolute(module, node.level, node.module)
    if target.split(".")[0] != PACKAGE:
        return
    for alias in node.names:
        if alias.name == "*":
            module.star = True
            continue
        local = alias.asname or alias.name
        sub = f"{target}.{alias.name}"
        module.imports[local] = (sub, None) if _module_path(sub) is not None else (target, alias.name)


_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _bound_names(node: ast.stmt) -> list[str]:
    """Names a top-level statement binds (assignment targets, names defined inside `if`/`try` blocks). A
    comprehension's or a lambda's variables and a nested function's locals are not module names (only a walrus
    target escapes a comprehension)."""
    out: list[str] = []
    todo: list[ast.AST] = [node]
    while todo:
        inner = todo.pop()
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
            out.append(inner.id)
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(inner.name)
            continue
        elif isinstance(inner, _SCOPES):
            out += [n.target.id for n in ast.walk(inner) if isinstance(n, ast.NamedExpr)
                    and isinstance(n.target, ast.Name)]
            continue
        todo.extend(ast.iter_child_nodes(inner))
    return sorted(set(out))


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


# --------------------------------------------------------------------------- resolving references

# A target is ("def", module, name) or ("module", module) (a whole module's bytes).


def _resolve(module: _Module, name: str, depth: int = 0) -> tuple | None:
    """What ``name`` means at the top level of ``module``: a definition, a module, or None (a builtin, a local,
    an outside library, the contract)."""
    if depth > 20:
        return ("module", module.name)
    if name in module.defs:
        return ("def", module.name, name)
    if name in module.imports:
        target, attr = module.imports[name]
        if target in CONTRACT:
            return None
        if attr is None:
            return ("module", target)
        return _resolve_attr(target, attr, depth + 1)
    if module.star:
        return ("module", module.name)
    return None


def _resolve_attr(module_name: str, attr: str, depth: int = 0) -> tuple:
    """``module_name.attr``: a definition there, something it imports, a submodule, or (unknown) the module."""
    target = _read(module_name)
    if target is None:
        return ("module", module_name)
    if attr not in target.defs and attr not in target.imports and _module_path(f"{module_name}.{attr}") is not None:
        return ("module", f"{module_name}.{attr}")
    found = _resolve(target, attr, depth)
    return found if found is not None else ("module", module_name)


def _reference(module: _Module, node: ast.AST) -> tuple | None:
    """The target of a Name or an attribute chain on an imported module (``core.train``), else None."""
    chain = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    target = _resolve(module, node.id)
    while chain and target is not None and target[0] == "module":
        target = _resolve_attr(target[1], chain.pop())
    return target


class _Visitor:
    """Finds the references of a definition and writes its normalised form, references replaced by names."""

    def __init__(self, module: _Module):
        self.module = module
        self.targets: set[tuple] = set()

    def references(self, nodes: list[ast.stmt]) -> set[tuple]:
        for node in nodes:
            self._visit(_strip(node))
        return self.targets

    def _visit(self, node: ast.AST) -> None:
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(getattr(node, "ctx", None), ast.Load):
            target = _reference(self.module, node)
            if target is not None:  # `core.train` is one reference, not also the whole of `core`
                self.targets.add(target)
                return
        if isinstance(node, ast.Call):
            self._dynamic(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):  # an import inside a function: follow what it names
            scope = replace(self.module, defs={}, imports={}, star=False)
            _bind_import(scope, node)
            self.targets.update(t for t in map(lambda local: _resolve(scope, local), scope.imports) if t is not None)
            if scope.star:
                self.targets.add(("module", _absolute(self.module, node.level, node.module)))
        for child in ast.iter_child_nodes(node):
            self._visit(child)

    def _dynamic(self, call: ast.Call) -> None:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name in _DYNAMIC_CALLS:
            arg = call.args[0] if call.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith(PACKAGE):
                self.targets.add(("module", arg.value))
            elif name in ("globals", "vars"):
                self.targets.add(("module", self.module.name))
            else:  # an import whose name is computed: every module of this topic
                self.targets.add(("topic", topic_key(self.module.name)))
        elif name == "getattr" and call.args:
            target = _reference(self.module, call.args[0])
            if target is not None and target[0] == "module":
                self.targets.add(target)


class _Strip(ast.NodeTransformer):
    """Docstrings, function annotations and ``@bounded`` declarations out: they never change a number."""

    def _body(self, node):
        if node.body and _is_docstring(node.body[0]):
            node.body = node.body[1:] or [ast.Pass()]
        return node

    def visit_FunctionDef(self, node):
        node.decorator_list = [d for d in node.decorator_list if not _is_bounds(d)]
        node.returns = None
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                    *(a for a in (node.args.vararg, node.args.kwarg) if a)]:
            arg.annotation = None
        self.generic_visit(node)
        return self._body(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.generic_visit(node)
        return self._body(node)


def _is_bounds(decorator: ast.expr) -> bool:
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name == "bounded"


def _strip(node: ast.stmt) -> ast.stmt:
    import copy

    return _Strip().visit(copy.deepcopy(node))


class _Rename(ast.NodeTransformer):
    """References to definitions replaced by their canonical names (no file in them)."""

    def __init__(self, module: _Module, names: dict[tuple, str]):
        self.module, self.names = module, names

    def _swap(self, node):
        target = _reference(self.module, node)
        if target is not None and target in self.names:
            return ast.copy_location(ast.Name(id="§" + self.names[target], ctx=ast.Load()), node)
        return None

    def visit_Attribute(self, node):
        if isinstance(node.ctx, ast.Load):
            swapped = self._swap(node)
            if swapped is not None:
                return swapped
        return self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            return self._swap(node) or node
        return node


# --------------------------------------------------------------------------- the closure


def _ref_of(fn: Callable | str) -> tuple[str, str]:
    """``(module, top-level name)`` of a function, or of a lazy reference ``"toymodels.x.core:train"``."""
    if isinstance(fn, str):
        module, _, name = fn.partition(":")
        return module, name.split(".")[0]
    import inspect

    fn = inspect.unwrap(fn)
    return fn.__module__, fn.__qualname__.split(".")[0]


def _closure(start: tuple) -> set[tuple]:
    seen: set[tuple] = set()
    todo = [start]
    while todo:
        target = todo.pop()
        if target in seen:
            continue
        seen.add(target)
        if target[0] == "topic":
            for path in sorted(PACKAGE_DIR.rglob("*.py")):
                rel = path.relative_to(PACKAGE_DIR.parent).with_suffix("")
                mod = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
                if topic_key(mod) == target[1]:
                    todo.append(("module", mod))
            continue
        module = _read(target[1])
        if module is None:
            continue
        if target[0] == "module":
            continue  # its bytes are hashed whole; nothing inside is followed (conservative enough)
        if target[0] == "prelude":
            todo.extend(_Visitor(module).references(module.prelude))
            continue
        nodes = module.defs.get(target[2], [])
        if not nodes:
            todo.append(("module", module.name))
            continue
        todo.extend(_Visitor(module).references(nodes))
        if module.prelude:
            todo.append(("prelude", module.name))
    return seen


def _names(targets: set[tuple]) -> dict[tuple, str]:
    """Canonical names: ``topic:name``; where two reached definitions of one topic share a name, the module
    (relative to the topic) is added to both."""
    plain = {}
    for t in targets:
        if t[0] == "def":
            plain[t] = f"{topic_key(t[1])}:{t[2]}"
        elif t[0] == "module":
            plain[t] = f"module:{t[1]}"
        elif t[0] == "topic":
            plain[t] = f"topic:{t[1]}"
        else:
            plain[t] = f"prelude:{t[1]}"
    counts: dict[str, int] = {}
    for name in plain.values():
        counts[name] = counts.get(name, 0) + 1
    return {t: (n if counts[n] == 1 else f"{n}@{t[1]}") for t, n in plain.items()}


#: Fields that Python versions after 3.11 added to nodes 3.11 already had (PEP 695's type parameters): left out of
#: ``_dump`` when empty, so that a definition hashes the same under every Python the package supports.
_NEWER_FIELDS = frozenset({"type_params"})


def _dump(node) -> str:
    """``ast.dump(node, annotate_fields=False)`` exactly as Python 3.11 writes it, under any Python: 3.12 adds
    ``type_params=[]`` to every function and class, 3.13 omits empty fields, so ``ast.dump`` itself would give every
    definition another hash under another Python (and every shipped view would look stale there)."""
    if isinstance(node, ast.AST):
        cls, args, keywords = type(node), [], False
        for name in node._fields:
            try:
                value = getattr(node, name)
            except AttributeError:
                keywords = True
                continue
            if name in _NEWER_FIELDS and not value:
                continue
            if value is None and getattr(cls, name, ...) is None:  # an optional field left empty
                keywords = True
                continue
            text = _dump(value)
            args.append(f"{name}={text}" if keywords else text)
        return f"{cls.__name__}({', '.join(args)})"
    if isinstance(node, list):
        return "[" + ", ".join(_dump(x) for x in node) + "]"
    return repr(node)


def _fingerprint(target: tuple, names: dict[tuple, str]) -> str:
    kind = target[0]
    if kind == "topic":
        return "topic"
    module = _read(target[1])
    if module is None:
        return "missing"
    if kind == "module":
        return hashlib.sha256(module.source).hexdigest()
    nodes = module.prelude if kind == "prelude" else module.defs.get(target[2], [])
    text = "\n".join(_dump(_Rename(module, names).visit(_strip(n))) for n in nodes)
    return hashlib.sha256(text.encode()).hexdigest()


def definitions(fn: Callable | str) -> dict[str, str]:
    """Canonical name -> 16-hex hash of every definition ``fn`` can reach (``fn`` itself included). Each file is
    parsed once while it is unchanged."""
    targets = _closure(("def", *_ref_of(fn)))
    names = _names(targets)
    return {names[t]: _fingerprint(t, names)[:16] for t in sorted(targets, key=lambda t: names[t])}


def definition_hash(fn: Callable | str, defs: dict[str, str] | None = None) -> str:
    """One hash of everything ``fn`` can reach (see ``definitions``)."""
    defs = definitions(fn) if defs is None else defs
    h = hashlib.sha256()
    for name, digest in sorted(defs.items()):
        h.update(f"{name}={digest}\n".encode())
    return h.hexdigest()[:16]


def changed(recorded: dict[str, str], now: dict[str, str]) -> list[str]:
    """The canonical names whose hash differs between two ``definitions`` (added or removed ones too)."""
    return sorted(n for n in set(recorded) | set(now) if recorded.get(n) != now.get(n))
