"""Freshness by definition (``toymodels.freshness``): what stales a shipped result and what does not.

Synthetic topics in a temporary package folder check each rule against a hand-written case; a copy of the real
package checks the whole path (``precompute --check``) after editing a reached definition and a verdict.
"""
import ast
import inspect
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toymodels import freshness as F
from toymodels import store


@pytest.fixture
def pkg(tmp_path, monkeypatch):
    """A fresh package folder standing in for ``toymodels``; ``write(path, text)`` adds a module."""
    root = tmp_path / "toymodels"
    root.mkdir()
    (root / "__init__.py").write_text("")
    monkeypatch.setattr(F, "PACKAGE_DIR", root)
    monkeypatch.setattr(F, "_CACHE", {})

    def write(rel: str, text: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not (path.parent / "__init__.py").exists():
            (path.parent / "__init__.py").write_text("")
        old = path.stat().st_mtime_ns if path.exists() else 0
        path.write_text(text)
        os.utime(path, ns=(old + 10**9, old + 10**9))  # a new stamp even within one clock tick

    return write


BASE = {k: textwrap.dedent(v) for k, v in {
    "demo/__init__.py": '''
        """The contract."""
        def verdict(result):
            return result["y"] > 0
    ''',
    "demo/maths.py": '''
        from toymodels.topic import InputError
        SCALE = 3
        UNUSED = 1

        def helper(x):
            return x + 1

        def other(x):
            return 2 * x
    ''',
    "demo/train.py": '''
        from toymodels.topic import bounded, Range
        from .maths import helper, SCALE
        from toymodels.demo import maths as M

        @bounded(n=Range(1, 10))
        def view(n: int) -> dict:
            """The view."""
            # a comment
            return {"y": helper(n) * SCALE + M.other(n)}
    ''',
}.items()}
REF = "toymodels.demo.train:view"


def _setup(pkg, **changes):
    for rel, text in {**BASE, **changes}.items():
        pkg(rel, text)


def test_the_view_reaches_what_it_calls_and_uses_and_nothing_else(pkg):
    _setup(pkg)
    defs = F.definitions(REF)
    assert set(defs) == {"demo:view", "demo:helper", "demo:SCALE", "demo:other"}  # not UNUSED, not the contract


@pytest.mark.parametrize("label, rel, text", [
    ("docstring and comment", "demo/train.py", BASE["demo/train.py"].replace('"""The view."""', '"""Reworded."""')
     .replace("# a comment", "# another comment")),
    ("bounds", "demo/train.py", BASE["demo/train.py"].replace("Range(1, 10)", "Range(1, 99)")),
    ("annotations", "demo/train.py", BASE["demo/train.py"].replace("n: int) -> dict", "n: float) -> list")),
    ("the verdict", "demo/__init__.py", BASE["demo/__init__.py"].replace('result["y"] > 0', 'result["y"] > 1')),
    ("an unreached constant", "demo/maths.py", BASE["demo/maths.py"].replace("UNUSED = 1", "UNUSED = 2")),
    ("blank lines and layout", "demo/maths.py",
     BASE["demo/maths.py"].replace("return x + 1", "return (x\n        + 1)")),
])
def test_what_never_changes_a_number_stales_nothing(pkg, label, rel, text):
    _setup(pkg)
    before = F.definition_hash(REF)
    pkg(rel, text)
    assert F.definition_hash(REF) == before, label


@pytest.mark.parametrize("name, rel, old, new", [
    ("demo:helper", "demo/maths.py", "return x + 1", "return x + 2"),
    ("demo:SCALE", "demo/maths.py", "SCALE = 3", "SCALE = 4"),
    ("demo:other", "demo/maths.py", "return 2 * x", "return 3 * x"),
    ("demo:view", "demo/train.py", "* SCALE", "/ SCALE"),
])
def test_a_change_to_a_reached_definition_stales_and_is_named(pkg, name, rel, old, new):
    _setup(pkg)
    before = F.definitions(REF)
    pkg(rel, BASE[rel].replace(old, new))
    after = F.definitions(REF)
    assert F.changed(before, after) == [name]
    assert F.definition_hash(REF) != F.definition_hash(REF, before)


def test_a_comprehension_variable_or_a_main_block_is_not_reached(pkg):
    """A local ``i`` in a view is not the module's comprehension variable ``i``, and a script's
    ``if __name__ == "__main__":`` block never runs when the view is imported: editing either stales nothing."""
    train = BASE["demo/train.py"] + textwrap.dedent('''
        POW = [2 ** i for i in range(4)]
        ADD = (lambda k: k + 1)

        def local(n):
            i = n + 1
            k = i
            return i * k

        if __name__ == "__main__":
            print(view(3))
    ''')
    _setup(pkg, **{"demo/train.py": train.replace("helper(n) * SCALE", "helper(local(n)) * SCALE")})
    before = F.definitions(REF)
    assert not {"demo:i", "demo:k"} & set(before) and not any(n.startswith("prelude:") for n in before)
    assert {"demo:local", "demo:helper"} <= set(before)
    pkg("demo/train.py", train.replace("helper(n) * SCALE", "helper(local(n)) * SCALE")
        .replace("range(4)", "range(5)").replace("k + 1", "k + 2").replace("print(view(3))", "print(view(4))"))
    assert F.definitions(REF) == before
    pkg("demo/train.py", train.replace("helper(n) * SCALE", "helper(local(n)) * SCALE").replace("i * k", "i + k"))
    assert F.changed(before, F.definitions(REF)) == ["demo:local"]  # the local function itself is reached


def test_a_move_inside_the_topic_keeps_the_hash(pkg):
    _setup(pkg)
    before = F.definition_hash(REF)
    # helper moves from maths.py into train.py; train.py now calls it without an import; other is re-exported
    # through the package's __init__ and imported from there.
    pkg("demo/maths.py", BASE["demo/maths.py"].replace("def helper(x):\n    return x + 1\n", ""))
    pkg("demo/train.py", textwrap.dedent('''
        from toymodels.topic import bounded, Range
        from toymodels.demo.maths import SCALE, other

        def helper(x):
            return x + 1

        @bounded(n=Range(1, 10))
        def view(n: int) -> dict:
            return {"y": helper(n) * SCALE + other(n)}
    '''))
    assert F.definition_hash(REF) == before


def test_a_move_to_another_topic_changes_the_names(pkg):
    _setup(pkg)
    before = F.definitions(REF)
    pkg("shared/util.py", "def helper(x):\n    return x + 1\n")
    pkg("demo/train.py", BASE["demo/train.py"].replace(
        "from .maths import helper, SCALE", "from .maths import SCALE\nfrom toymodels.shared.util import helper"))
    after = F.definitions(REF)
    assert "shared:helper" in after and "demo:helper" not in after and after["shared:helper"] == before["demo:helper"]


def test_a_dynamic_import_hashes_the_whole_module(pkg):
    _setup(pkg, **{"demo/train.py": BASE["demo/train.py"].replace(
        "return {", "mod = importlib.import_module('toymodels.demo.maths')\n    return {").replace(
        "from .maths", "import importlib\nfrom .maths")})
    before = F.definition_hash(REF)
    assert "module:toymodels.demo.maths" in F.definitions(REF)
    pkg("demo/maths.py", BASE["demo/maths.py"].replace("UNUSED = 1", "UNUSED = 2"))  # unreached, but dynamic
    assert F.definition_hash(REF) != before


def test_an_import_inside_a_function_is_followed(pkg):
    """A view that imports a helper inside its body (a lazy import) reaches that helper: editing it stales the
    view, and an unreached neighbour still does not."""
    _setup(pkg, **{"demo/train.py": BASE["demo/train.py"].replace(
        "from .maths import helper, SCALE\n", "from .maths import SCALE\n").replace(
        '"""The view."""', '"""The view."""\n    from .maths import helper')})
    defs = F.definitions(REF)
    assert "demo:helper" in defs and "demo:UNUSED" not in defs
    before = F.definition_hash(REF)
    pkg("demo/maths.py", BASE["demo/maths.py"].replace("UNUSED = 1", "UNUSED = 2"))
    assert F.definition_hash(REF) == before
    pkg("demo/maths.py", BASE["demo/maths.py"].replace("return x + 1", "return x + 2"))
    assert F.changed(defs, F.definitions(REF)) == ["demo:helper"]


def test_two_definitions_of_one_name_in_a_topic_are_both_followed(pkg):
    _setup(pkg)
    pkg("demo/other.py", "def helper(x):\n    return x - 1\n")
    pkg("demo/train.py", BASE["demo/train.py"].replace("from .maths import helper, SCALE",
                                                       "from .maths import helper, SCALE\nfrom . import other as O")
        .replace("+ M.other(n)", "+ M.other(n) + O.helper(n)"))
    defs = F.definitions(REF)
    assert {"demo:helper@toymodels.demo.maths", "demo:helper@toymodels.demo.other"} <= set(defs)
    before = F.definition_hash(REF)
    pkg("demo/other.py", "def helper(x):\n    return x - 2\n")
    assert F.changed(defs, F.definitions(REF)) == ["demo:helper@toymodels.demo.other"]
    assert F.definition_hash(REF) != before


def test_keys_name_the_topic_and_function_not_the_file():
    from tests.test_store import toy_result

    assert store.fn_name(toy_result) == "tests.test_store:toy_result"
    assert F.topic_key("toymodels.superposition.core") == "superposition"
    assert F.topic_key("toymodels.gated_attention.model") == "gated_attention"  # one topic, one package
    assert F.topic_key("numpy.linalg") == "numpy.linalg"  # outside the package: its own topic


# --------------------------------------------------------------------------- the real package, copied


def _insert_statement(path: Path, function: str, statement: str) -> None:
    """Add ``statement`` as the first statement of top-level ``function`` (after its docstring)."""
    text = path.read_text()
    tree = ast.parse(text)
    node = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == function)
    first = node.body[1] if len(node.body) > 1 and F._is_docstring(node.body[0]) else node.body[0]
    lines = text.splitlines(keepends=True)
    lines.insert(first.lineno - 1, " " * first.col_offset + statement + "\n")
    path.write_text("".join(lines))


def test_precompute_check_names_the_changed_definition_and_ignores_the_verdict(tmp_path):
    """A copy of the package: --check passes as shipped; editing the topic's verdict stales nothing; editing a
    definition a view reaches stales that view, naming the definition."""
    root = Path(store.__file__).resolve().parent
    shutil.copytree(root, tmp_path / "toymodels", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}

    def check(*topics):
        return subprocess.run([sys.executable, "-m", "toymodels", "precompute", "--check", *topics], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300)

    assert check("transductive").returncode == 0
    from toymodels import shipped

    module = shipped.module_for("transductive")
    judge = module.metrics  # a package judges by its CLAIMS on metrics(views): the verdict reaches no view
    src = Path(sys.modules[judge.__module__].__file__)
    copy = tmp_path / "toymodels" / src.relative_to(root)
    _insert_statement(copy, judge.__name__, "_unused = 0")
    ok = check("transductive")
    assert ok.returncode == 0, ok.stderr  # the verdict reaches no view's hash (its record is recomputed)

    view = module.VIEWS[module.HEADLINE]
    fn = view.resolve(module.__name__)
    defs = F.definitions(fn)
    target = next(n.split(":", 1)[1] for n in defs if n.startswith("transductive:") and not n[13:].isupper()
                  and n.split(":", 1)[1] != inspect.unwrap(fn).__name__)
    for path in (tmp_path / "toymodels").rglob("*.py"):
        mod = F._parse("x", path, path.read_bytes())
        name = ".".join(("toymodels",) + path.relative_to(tmp_path / "toymodels").with_suffix("").parts)
        if any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) for n in mod.defs.get(target, [])) \
                and F.topic_key(name) == "transductive":
            _insert_statement(path, target, "_unused = 0")
            break
    bad = check("transductive")
    assert bad.returncode == 1
    assert f"stale: transductive/{module.HEADLINE}" in bad.stderr and f"transductive:{target}" in bad.stderr
    assert "Traceback" not in bad.stderr
