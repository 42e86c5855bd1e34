"""`defines`: the AST index (never importing), kinds, nesting, conditions, modules, errors."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from chimera.spec.engine.pyindex import index_source
from chimera.spec.kinds import Defines
from chimera.spec.kinds.defines import SymbolKind
from chimera.spec.model import Status

if TYPE_CHECKING:
    from tests.unit.engine.conftest import Evaluate

SOURCE = textwrap.dedent(
    '''
    """A module exercising every way a name can be defined."""
    from __future__ import annotations

    import functools
    import os.path as osp
    from typing import TYPE_CHECKING
    import typing

    if TYPE_CHECKING:
        from collections.abc import Iterator
        class OnlyForTypes: ...
        def typing_only() -> None: ...
    else:
        RUNTIME_ELSE = 1

    if typing.TYPE_CHECKING:
        ALSO_TYPES_ONLY = 2

    if not TYPE_CHECKING:
        NOT_TYPES = 3

    raise_on_import = 1 / 1
    LIMIT: int = 10
    DECLARED: str
    a, (b, *rest) = 1, (2, 3, 4)
    COUNTER = 0
    COUNTER += 1

    try:
        import tomllib
    except ImportError:
        tomllib = None
        def fallback_loader(): ...

    if os_name := "posix":
        CONDITIONAL = True
        class Conditional:
            def inside(self): ...
    elif True:
        ELIF_NAME = 1

    with open(__file__) as _fh:
        FROM_WITH = 1


    def plain(x):
        def inner(): ...
        local_var = 1
        return x


    async def fetch():
        return 1


    @functools.lru_cache(maxsize=None)
    def cached():
        return 1


    class Outer:
        """Docstring."""

        attr = 1
        annotated: int = 2
        declared_only: str

        class Inner:
            class Deepest:
                def deep_method(self): ...

            async def inner_async(self): ...

        @property
        def prop(self):
            return 1

        @staticmethod
        def static(): ...

        async def run(self): ...

        if TYPE_CHECKING:
            def typed_only_method(self): ...
    '''
)


@pytest.fixture
def module_root(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/mod.py").write_text(SOURCE, encoding="utf-8")
    return tmp_path


CASES_DEFINED = [
    ("Outer", "class"),
    ("Outer", "any"),
    ("Outer.Inner", "class"),
    ("Outer.Inner.Deepest", "class"),
    ("Outer.Inner.Deepest.deep_method", "method"),
    ("Outer.Inner.inner_async", "method"),
    ("Outer.prop", "method"),
    ("Outer.static", "method"),
    ("Outer.run", "method"),
    ("Outer.attr", "variable"),
    ("Outer.annotated", "variable"),
    ("Outer.declared_only", "variable"),
    ("plain", "function"),
    ("fetch", "function"),
    ("cached", "function"),
    ("LIMIT", "variable"),
    ("DECLARED", "variable"),
    ("a", "variable"),
    ("b", "variable"),
    ("rest", "variable"),
    ("COUNTER", "variable"),
    ("RUNTIME_ELSE", "variable"),
    ("NOT_TYPES", "variable"),
    ("tomllib", "variable"),
    ("fallback_loader", "function"),
    ("CONDITIONAL", "variable"),
    ("Conditional.inside", "method"),
    ("ELIF_NAME", "any"),
    ("FROM_WITH", "variable"),
    ("osp", "any"),
    ("functools", "any"),
]


@pytest.mark.parametrize(("symbol", "kind"), CASES_DEFINED)
def test_defined_symbols(module_root: Path, evaluate: Evaluate, symbol: str, kind: str) -> None:
    res = evaluate(module_root, Defines(path="pkg/mod.py", symbol=symbol, kind=SymbolKind(kind)))
    assert res.status is Status.PASSED, res.message
    ev = res.evidence[0]
    assert ev.file == "pkg/mod.py" and ev.line is not None and ev.col is not None
    assert symbol.rsplit(".", 1)[-1] in ev.snippet


CASES_NOT_DEFINED = [
    ("OnlyForTypes", "any"),  # only under `if TYPE_CHECKING:`
    ("typing_only", "any"),
    ("Iterator", "any"),
    ("ALSO_TYPES_ONLY", "any"),  # `if typing.TYPE_CHECKING:`
    ("Outer.typed_only_method", "any"),
    ("inner", "any"),  # a function's locals are not module attributes
    ("plain.inner", "any"),
    ("local_var", "any"),
    ("Outer.missing", "any"),
    ("Nope", "any"),
]


@pytest.mark.parametrize(("symbol", "kind"), CASES_NOT_DEFINED)
def test_not_defined_symbols(module_root: Path, evaluate: Evaluate, symbol: str, kind: str) -> None:
    res = evaluate(module_root, Defines(path="pkg/mod.py", symbol=symbol, kind=SymbolKind(kind)))
    assert res.status is Status.FAILED, res.message
    assert "does not define" in res.message


@pytest.mark.parametrize(
    ("symbol", "kind", "actual"),
    [
        ("Outer", "function", "class"),
        ("plain", "class", "function"),
        ("Outer.run", "function", "method"),
        ("plain", "method", "function"),
        ("LIMIT", "class", "variable"),
        ("osp", "class", "import"),
    ],
)
def test_wrong_kind_fails_with_the_actual_kind(
    module_root: Path, evaluate: Evaluate, symbol: str, kind: str, actual: str
) -> None:
    res = evaluate(module_root, Defines(path="pkg/mod.py", symbol=symbol, kind=SymbolKind(kind)))
    assert res.status is Status.FAILED
    assert f"is a {actual}, not a {kind}" in res.message
    assert res.evidence[0].note == actual


def test_near_miss_names_are_evidence(module_root: Path, evaluate: Evaluate) -> None:
    res = evaluate(module_root, Defines(path="pkg/mod.py", symbol="Outer.Inner.Deepest.deepmethod"))
    assert res.status is Status.FAILED
    notes = [e.note for e in res.evidence]
    assert any("Outer.Inner.Deepest.deep_method" in n for n in notes), notes
    moved = evaluate(module_root, Defines(path="pkg/mod.py", symbol="Outer.deep_method"))
    assert any("Outer.Inner.Deepest.deep_method" in e.note for e in moved.evidence)


def test_code_is_never_imported(tmp_path: Path, evaluate: Evaluate) -> None:
    marker = tmp_path / "imported.txt"
    (tmp_path / "boom.py").write_text(
        f"open({str(marker)!r}, 'w').write('imported')\nraise SystemExit(3)\nclass Kept: ...\n",
        encoding="utf-8",
    )
    res = evaluate(tmp_path, Defines(path="boom.py", symbol="Kept", kind=SymbolKind.CLASS))
    assert res.status is Status.PASSED
    assert not marker.exists()


def test_syntax_error_is_an_error_naming_the_line(tmp_path: Path, evaluate: Evaluate) -> None:
    (tmp_path / "broken.py").write_text("class A:\n    def f(self):\n        return (\n", "utf-8")
    res = evaluate(tmp_path, Defines(path="broken.py", symbol="A"))
    assert res.status is Status.ERROR
    assert "syntax error at broken.py:3" in res.message


def test_missing_file_fails(tmp_path: Path, evaluate: Evaluate) -> None:
    res = evaluate(tmp_path, Defines(path="pkg/absent.py", symbol="A"))
    assert res.status is Status.FAILED
    assert "pkg/absent.py does not exist" in res.message


def test_unreadable_module_is_an_error(tmp_path: Path, evaluate: Evaluate) -> None:
    (tmp_path / "bin.py").write_bytes(b"x = 1\x00\n")
    res = evaluate(tmp_path, Defines(path="bin.py", symbol="x"))
    assert res.status is Status.ERROR
    assert "binary" in res.message


def test_pep263_module(tmp_path: Path, evaluate: Evaluate) -> None:
    (tmp_path / "old.py").write_bytes(
        "# coding: latin-1\nNAME = 'é'\ndef grüß(): ...\n".encode("latin-1")
    )
    res = evaluate(tmp_path, Defines(path="old.py", symbol="grüß", kind=SymbolKind.FUNCTION))
    assert res.status is Status.PASSED, res.message


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ("pkg/mod.py", "pkg/mod.py"),
        ("pkg/mod/__init__.py", "pkg/mod/__init__.py"),
        ("src/pkg/mod.py", "src/pkg/mod.py"),
        ("src/pkg/mod/__init__.py", "src/pkg/mod/__init__.py"),
    ],
)
def test_module_resolution(tmp_path: Path, evaluate: Evaluate, layout: str, expected: str) -> None:
    path = tmp_path / layout
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("class Service:\n    def start(self): ...\n", encoding="utf-8")
    res = evaluate(
        tmp_path, Defines(module="pkg.mod", symbol="Service.start", kind=SymbolKind.METHOD)
    )
    assert res.status is Status.PASSED, res.message
    assert res.evidence[0].file == expected


def test_module_not_found_fails_naming_the_candidates(tmp_path: Path, evaluate: Evaluate) -> None:
    res = evaluate(tmp_path, Defines(module="pkg.mod", symbol="X"))
    assert res.status is Status.FAILED
    assert "pkg/mod.py" in res.message and "src/pkg/mod/__init__.py" in res.message


def test_index_source_reports_positions() -> None:
    defs, problem = index_source("class A:\n    async def go(self): ...\n", "m.py")
    assert problem is None
    (go,) = defs["A.go"]
    assert (go.kind, go.line, go.col) == ("method", 2, 5)
    _, bad = index_source("def f(:\n", "m.py")
    assert bad is not None and bad.startswith("syntax error at m.py:1:")


DEAD_BRANCHES = textwrap.dedent(
    """
    if False:
        class DeadClass: ...
        def dead_function(): ...
    else:
        LIVE_ELSE = 1
    if 0:
        DEAD_ZERO = 1
    if not True:
        DEAD_NOT = 1
    if True:
        LIVE_TRUE = 1
    else:
        DEAD_ELSE = 1
    if None:
        DEAD_NONE = 1
    elif "yes":
        LIVE_ELIF = 1

    class Holder:
        if False:
            def dead_method(self): ...
        def live_method(self): ...
    """
)


@pytest.mark.parametrize(
    ("symbol", "defined"),
    [
        ("DeadClass", False),
        ("dead_function", False),
        ("DEAD_ZERO", False),
        ("DEAD_NOT", False),
        ("DEAD_ELSE", False),
        ("DEAD_NONE", False),
        ("Holder.dead_method", False),
        ("LIVE_ELSE", True),
        ("LIVE_TRUE", True),
        ("LIVE_ELIF", True),
        ("Holder.live_method", True),
    ],
)
def test_dead_branches_define_nothing(
    tmp_path: Path, evaluate: Evaluate, symbol: str, defined: bool
) -> None:
    (tmp_path / "dead.py").write_text(DEAD_BRANCHES, encoding="utf-8")
    res = evaluate(tmp_path, Defines(path="dead.py", symbol=symbol))
    assert res.status is (Status.PASSED if defined else Status.FAILED), res.message


CLASS_LEVEL_IF = textwrap.dedent(
    """
    import sys

    class Compat:
        if sys.version_info >= (3, 99):
            def future_only(self): ...
        else:
            def present(self): ...
        try:
            from os import fspath as as_path
        except ImportError:
            def as_path(self): ...
        if TYPE_CHECKING:
            def typed_only(self): ...
    """
)


@pytest.mark.parametrize(
    ("symbol", "kind", "defined"),
    [
        # A test that is not a constant is never evaluated: both branches define.
        ("Compat.future_only", "method", True),
        ("Compat.present", "method", True),
        ("Compat.as_path", "any", True),
        ("Compat.typed_only", "any", False),
    ],
)
def test_class_level_if_branches_define_methods(
    tmp_path: Path, evaluate: Evaluate, symbol: str, kind: str, defined: bool
) -> None:
    (tmp_path / "compat.py").write_text(CLASS_LEVEL_IF, encoding="utf-8")
    res = evaluate(tmp_path, Defines(path="compat.py", symbol=symbol, kind=SymbolKind(kind)))
    assert res.status is (Status.PASSED if defined else Status.FAILED), res.message
    if defined:
        assert res.evidence[0].line is not None and res.evidence[0].line > 4
