"""The check engine on real code nobody here wrote: the installed standard library and
site-packages, read-only.

Independent oracles: runtime introspection of imported stdlib modules for ``defines`` (the
engine itself never imports), and a brute-force ``regex`` search for ``absent``/``contains``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sysconfig
import tokenize
import types
from pathlib import Path

import pytest
import regex

from chimera.spec.drift import DriftSession
from chimera.spec.engine import EngineOptions, EngineStats
from chimera.spec.kinds import Absent, Contains, Defines
from chimera.spec.kinds.defines import SymbolKind
from chimera.spec.kinds.text import MatchMode
from chimera.spec.model import Check, Requirement, SourceLocation, Spec, SpecFile, Status
from chimera.spec.results import RequirementResult

STDLIB = Path(sysconfig.get_paths()["stdlib"]).resolve()
PURELIB = Path(sysconfig.get_paths()["purelib"]).resolve()
# An interpreter installed by a git-cloned version manager sits inside a repository that
# ignores it; these trees are checked as plain directories.
WALK = EngineOptions(listing="walk")


def spec_of(checks: list[Check]) -> Spec:
    loc = SourceLocation("real.yaml", 1, 1)
    reqs = tuple(Requirement(f"r{i}", c, loc) for i, c in enumerate(checks))
    return Spec((SpecFile(Path("real.yaml"), reqs),))


def run(root: Path, checks: list[Check]) -> tuple[list[RequirementResult], EngineStats]:
    stats = EngineStats()
    report = DriftSession(spec_of(checks), root, options=WALK, stats=stats).report()
    return list(report.results), stats


@pytest.mark.parametrize(
    ("path", "symbol", "kind"),
    [
        ("collections/__init__.py", "OrderedDict.move_to_end", "method"),
        ("collections/__init__.py", "OrderedDict", "class"),
        ("collections/__init__.py", "namedtuple", "function"),
        ("argparse.py", "HelpFormatter._Section", "class"),  # nested class
        ("argparse.py", "HelpFormatter._Section.format_help", "method"),
        ("argparse.py", "_SubParsersAction._ChoicesPseudoAction", "class"),
        ("asyncio/streams.py", "StreamWriter.wait_closed", "method"),  # async def
        ("asyncio/streams.py", "StreamReader._wait_for_data", "method"),
        ("functools.py", "lru_cache", "function"),
        ("functools.py", "cached_property.__set_name__", "method"),
        ("pathlib.py", "PurePath.with_suffix", "method"),
        ("pathlib.py", "Path.read_text", "method"),
        ("dataclasses.py", "dataclass", "function"),
        ("dataclasses.py", "MISSING", "variable"),
        ("enum.py", "Enum", "class"),
        ("typing.py", "_idfunc", "function"),  # defined under a module-level try
        ("http/server.py", "ThreadingHTTPServer", "class"),
        ("logging/__init__.py", "Logger.isEnabledFor", "method"),
        ("json/decoder.py", "JSONDecoder.raw_decode", "method"),
    ],
)
def test_defines_real_stdlib_symbols(path: str, symbol: str, kind: str) -> None:
    (result,), _ = run(STDLIB, [Defines(path=path, symbol=symbol, kind=SymbolKind(kind))])
    assert result.status is Status.PASSED, result.message


def test_defines_by_module_in_the_stdlib_layout() -> None:
    results, _ = run(
        STDLIB,
        [
            Defines(module="collections", symbol="OrderedDict.move_to_end", kind=SymbolKind.METHOD),
            Defines(module="json.decoder", symbol="JSONDecoder", kind=SymbolKind.CLASS),
            Defines(module="email.message", symbol="Message.get_payload", kind=SymbolKind.METHOD),
            Defines(
                module="xml.etree.ElementTree", symbol="ElementTree.write", kind=SymbolKind.METHOD
            ),
        ],
    )
    for result in results:
        assert result.status is Status.PASSED, result.message


def test_real_near_miss_is_reported() -> None:
    # add_argument lives on argparse's _ActionsContainer, which ArgumentParser inherits.
    (result,), _ = run(STDLIB, [Defines(path="argparse.py", symbol="ArgumentParser.add_argument")])
    assert result.status is Status.FAILED
    notes = [e.note for e in result.evidence]
    assert any("_ActionsContainer.add_argument" in n for n in notes), notes


MODULES = [
    "argparse", "ast", "calendar", "collections", "configparser", "csv", "dataclasses",
    "difflib", "email.message", "enum", "fractions", "ftplib", "functools", "gettext",
    "http.client", "http.cookiejar", "inspect", "ipaddress", "json.decoder", "logging",
    "logging.handlers", "mailbox", "optparse", "pathlib", "pprint", "shlex", "smtplib",
    "string", "subprocess", "tarfile", "tempfile", "textwrap", "threading", "tokenize",
    "typing", "unittest.case", "unittest.mock", "urllib.request", "uuid", "zipfile",
]  # fmt: skip


def _functions_of(cls: type) -> list[tuple[str, types.FunctionType]]:
    out = []
    for name, raw in vars(cls).items():
        func = raw
        if isinstance(raw, staticmethod | classmethod):
            func = raw.__func__
        elif isinstance(raw, property) and raw.fget is not None:
            func = raw.fget
        if isinstance(func, types.FunctionType):
            out.append((name, func))
    return out


@pytest.mark.slow
def test_defines_agrees_with_runtime_introspection() -> None:
    """Every class and method the imported modules define in their own file is found."""
    checks: list[Check] = []
    for name in MODULES:
        module = importlib.import_module(name)
        source = Path(inspect.getfile(module)).resolve()
        rel = source.relative_to(STDLIB).as_posix()
        text = source.read_text(encoding="utf-8")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or "<locals>" in cls.__qualname__:
                continue
            leaf = cls.__qualname__.rsplit(".", 1)[-1]
            if not re.search(rf"^[ \t]*class[ \t]+{re.escape(leaf)}\b", text, re.MULTILINE):
                continue  # a C type re-exported under the module's name (ast.AST, ...)
            checks.append(Defines(path=rel, symbol=cls.__qualname__))
            for meth, func in _functions_of(cls):
                code_file = Path(func.__code__.co_filename)
                own = func.__qualname__ == f"{cls.__qualname__}.{meth}"
                if own and code_file.is_absolute() and code_file.resolve() == source:
                    checks.append(
                        Defines(path=rel, symbol=func.__qualname__, kind=SymbolKind.METHOD)
                    )
    assert len(checks) > 1500
    results, stats = run(STDLIB, checks)
    red = [r for r in results if r.status is not Status.PASSED]
    assert not red, [(r.requirement.check.describe(), r.message) for r in red[:5]]
    assert len(stats.parses) == len(MODULES)
    assert max(stats.parses.values()) == 1


# -- absent / contains over thousands of installed files ---------------------------------


def _decode(path: Path, data: bytes) -> str | None:
    """The oracle's own decoding: UTF-8 (BOM dropped), PEP 263 for .py, CRLF as LF."""
    if b"\0" in data:
        return None
    encoding = "utf-8-sig"
    if path.suffix == ".py":
        lines = iter(data.splitlines(keepends=True)[:2])
        try:
            encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
        except SyntaxError:
            return None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def _oracle_files(root: Path) -> tuple[list[Path], list[str]]:
    """Every .py file under ``root``, skipping directories that carry a .gitignore (returned
    as exclude globs for the engine, so both sides select the same files)."""
    files: list[Path] = []
    skipped: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here != root and (here / ".gitignore").exists():
            skipped.append(here.relative_to(root).as_posix() + "/")
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if d not in (".git", ".chimera")]
        for name in filenames:
            path = here / name
            if name.endswith(".py") and path.is_file() and not path.is_symlink():
                files.append(path)
    return files, skipped


PATTERNS = [
    r"\bbreakpoint\(\)",
    r"^import pdb\b",
    r"pdb\.set_trace\(",
    r"^\s*print\(f?[\"']DEBUG",
    r"(?i)todo\(remove\)",
    r"^class \w+Error\(Exception\):$",
    r"eval\(input",
]


@pytest.fixture(scope="module")
def site_packages_oracle() -> tuple[dict[str, str], list[str], int]:
    files, skipped = _oracle_files(PURELIB)
    texts: dict[str, str] = {}
    unreadable = 0
    for path in files:
        text = _decode(path, path.read_bytes())
        if text is None:
            unreadable += 1
        else:
            texts[path.relative_to(PURELIB).as_posix()] = text
    return texts, skipped, unreadable


@pytest.mark.slow
def test_absent_and_contains_over_site_packages_agree_with_brute_force(
    site_packages_oracle: tuple[dict[str, str], list[str], int],
) -> None:
    texts, skipped, unreadable = site_packages_oracle
    assert len(texts) > 2000, "expected thousands of installed files"
    checks: list[Check] = [Absent(paths=["**/*.py"], exclude=skipped, pattern=p) for p in PATTERNS]
    checks += [Contains(paths=["**/*.py"], exclude=skipped, pattern=p) for p in PATTERNS]
    results, stats = run(PURELIB, checks)
    assert max(stats.reads.values()) == 1
    assert len(stats.reads) == len(texts) + unreadable
    absent_results = results[: len(PATTERNS)]
    contains_results = results[len(PATTERNS) :]
    for pattern, absent, contains in zip(PATTERNS, absent_results, contains_results, strict=True):
        compiled = regex.compile(pattern, regex.MULTILINE)
        expected = sorted(
            (rel, text.count("\n", 0, m.start()) + 1)
            for rel, text in texts.items()
            for m in compiled.finditer(text)
        )
        got = sorted((e.file, e.line) for e in absent.evidence if e.line is not None)
        assert got == expected, pattern
        unscannable = [e for e in absent.evidence if e.line is None and e.file is not None]
        assert len(unscannable) == unreadable, pattern
        if expected:
            assert absent.status is Status.FAILED
            assert contains.status is Status.PASSED
            first = contains.evidence[0]
            assert (first.file, first.line) in set(expected)
        else:
            red = Status.ERROR if unreadable else Status.PASSED
            assert absent.status is red
            assert contains.status is (Status.ERROR if unreadable else Status.FAILED)


def test_contains_every_file_over_the_stdlib(
    site_packages_oracle: tuple[dict[str, str], list[str], int],
) -> None:
    """`match: all` over a real package: every module of `email` starts with a docstring or
    comment, except the ones the brute force also finds."""
    pattern = r"\A(\"\"\"|#|'''|r\"\"\")"
    results, _ = run(
        STDLIB, [Contains(paths=["email/**/*.py"], pattern=pattern, match=MatchMode.ALL)]
    )
    (result,) = results
    compiled = regex.compile(pattern, regex.MULTILINE)
    without = sorted(
        p.relative_to(STDLIB).as_posix()
        for p in (STDLIB / "email").rglob("*.py")
        if not compiled.search(_decode(p, p.read_bytes()) or "")
    )
    if without:
        assert result.status is Status.FAILED
        # Evidence without a file ("") matches no path in `without`.
        assert sorted(e.file or "" for e in result.evidence) == without
    else:
        assert result.status is Status.PASSED, result.message


def test_undecodable_real_files_fail_closed() -> None:
    """CPython ships deliberately broken files in its test data: they never help a pass."""
    bad = STDLIB / "test" / "tokenizedata" / "bad_coding.py"
    if not bad.exists():
        bad = STDLIB / "test" / "bad_coding.py"
    if not bad.exists():
        pytest.skip("this interpreter ships no test data")
    rel = bad.relative_to(STDLIB).as_posix()
    results, _ = run(STDLIB, [Absent(path=rel, pattern="anything"), Defines(path=rel, symbol="x")])
    absent, defines = results
    assert absent.status is Status.ERROR
    assert "undecodable" in absent.message
    assert defines.status is Status.ERROR
