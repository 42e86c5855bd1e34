"""What a configuration file makes run, read from its text: the content side of the scan table.

A file class whose verdict depends on what the file says (``addopts = "-p pkg.x"`` in
``pytest.ini`` loads a plugin; ``addopts = "-q"`` does not) is judged by comparing what each
side of the change makes run. Each reader here turns a parsed document into a set of
one-line descriptions (``"-p pkg.x"``, ``"pytest11: x = pkg.x"``, ``"postUpgradeTasks:
{...}"``); the scan reports the class when the two sides' sets differ.

Formats: :data:`LOADERS` parses a text as TOML, INI (``configparser``, no interpolation), JSON
(also the JSONC/JSON5 subset of comments and trailing commas that VS Code and Renovate accept)
or YAML, raising :class:`Unparsed` when it cannot: the scan then holds the file for review,
since what it runs cannot be told.

Sources: pytest's ``-p`` option, ``pytest11`` entry points and ``pytest_plugins`` (pytest's
"Writing plugins" / "How to install and use plugins" pages); Renovate's ``postUpgradeTasks``,
``automerge`` and ``ignoreTests`` options; VS Code's ``runOptions.runOn: "folderOpen"`` task
option; Read the Docs' ``build.commands`` and ``build.jobs`` (``.readthedocs.yaml`` v2).
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import shlex
import tomllib
from collections.abc import Callable, Iterator
from typing import Any

from chimera.spec.yamlload import parse_yaml

__all__ = [
    "LOADERS",
    "PYPROJECT_DEPENDENCY_TABLES",
    "Unparsed",
    "chimera_table",
    "dependency_tables",
    "ini_addopts_plugins",
    "ini_entry_points",
    "python_plugins",
    "readthedocs_commands",
    "renovate_tasks",
    "toml_addopts_plugins",
    "toml_entry_points",
    "vscode_folder_open_tasks",
]


class Unparsed(ValueError):
    """The text does not parse in the file's format."""


def _toml(text: str) -> Any:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise Unparsed(str(exc) or "nested too deeply") from exc


def _ini(text: str) -> Any:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise Unparsed(str(exc).splitlines()[0]) from exc
    return parser


# A JSON string, a comment, or a comma before a closing bracket: comments become spaces and
# trailing commas go, so JSONC (VS Code) and Renovate's JSON5 files read as JSON. Anything
# else JSON5 allows (unquoted keys, single quotes) does not parse and the file is held.
_JSONC_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|,(?=\s*(?://[^\n]*\s*|/\*.*?\*/\s*)*[}\]])', re.S
)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass

    def fix(m: re.Match[str]) -> str:
        tok = m.group(0)
        if tok.startswith('"'):
            return tok
        return "\n" * tok.count("\n") or " "

    try:
        return json.loads(_JSONC_TOKEN.sub(fix, text))
    except (ValueError, RecursionError) as exc:
        raise Unparsed(str(exc) or "nested too deeply") from exc


def _yaml(text: str) -> Any:
    """The document, read by the Spec's YAML reader: an alias bomb or a recursive alias is
    refused (``yaml.safe_load`` would hand back a graph that explodes when walked)."""
    doc = parse_yaml(text)
    if doc.syntax_error or any("alias" in issue.message for issue in doc.issues):
        raise Unparsed(doc.issues[0].message if doc.issues else "malformed YAML")
    return doc.value


LOADERS: dict[str, Callable[[str], Any]] = {
    "toml": _toml,
    "ini": _ini,
    "json": _json,
    "yaml": _yaml,
    "text": str,
}
"""Format name → parser of a text (raises :class:`Unparsed`); ``text`` hands the text on
(a Python module is read by its reader, which falls back to lines when it does not parse)."""


def _dig(doc: Any, *keys: str) -> Any:
    node = doc
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _plugin_options(value: Any) -> Iterator[str]:
    """``-p NAME`` of pytest's ``addopts`` (a string or a list), ``no:NAME`` left out."""
    if isinstance(value, str):
        try:
            words = shlex.split(value)
        except ValueError:
            words = value.split()
    elif isinstance(value, list):
        words = [str(w) for w in value]
    else:
        return
    for i, word in enumerate(words):
        if word == "-p":
            name = words[i + 1] if i + 1 < len(words) else ""
        elif word.startswith("-p") and not word.startswith("--"):
            name = word[2:]
        else:
            continue
        if name and not name.startswith("no:"):
            yield f"-p {name}"


def ini_addopts_plugins(doc: Any) -> frozenset[str]:
    """Plugins ``addopts`` loads in ``[pytest]`` (``pytest.ini``, ``tox.ini``) or
    ``[tool:pytest]`` (``setup.cfg``)."""
    found: set[str] = set()
    for section in ("pytest", "tool:pytest"):
        if doc.has_section(section) and doc.has_option(section, "addopts"):
            found.update(_plugin_options(doc.get(section, "addopts")))
    return frozenset(found)


def toml_addopts_plugins(doc: Any) -> frozenset[str]:
    """Plugins ``addopts`` loads in ``[tool.pytest.ini_options]`` / ``[tool.pytest]``
    (``pyproject.toml``) or ``[pytest]`` (``pytest.toml``)."""
    found: set[str] = set()
    for keys in (("tool", "pytest", "ini_options"), ("tool", "pytest"), ("pytest",)):
        found.update(_plugin_options(_dig(doc, *keys, "addopts")))
    return frozenset(found)


def ini_entry_points(doc: Any) -> frozenset[str]:
    """``pytest11`` entry points of ``setup.cfg``'s ``[options.entry_points]``."""
    section = "options.entry_points"
    if not (doc.has_section(section) and doc.has_option(section, "pytest11")):
        return frozenset()
    lines = doc.get(section, "pytest11").splitlines()
    return frozenset(f"pytest11: {ln.strip()}" for ln in lines if ln.strip())


def toml_entry_points(doc: Any) -> frozenset[str]:
    """``pytest11`` entry points of ``pyproject.toml`` (PEP 621, Poetry and Flit tables)."""
    found: set[str] = set()
    for keys in (
        ("project", "entry-points", "pytest11"),
        ("tool", "poetry", "plugins", "pytest11"),
        ("tool", "flit", "entrypoints", "pytest11"),
    ):
        table = _dig(doc, *keys)
        if isinstance(table, dict):
            found.update(f"pytest11: {k} = {_dump(v)}" for k, v in table.items())
        elif table is not None:
            found.add(f"pytest11: {_dump(table)}")
    return frozenset(found)


PYPROJECT_DEPENDENCY_TABLES: tuple[tuple[str, ...], ...] = (
    ("project", "dependencies"),
    ("project", "optional-dependencies"),
    ("build-system",),
    ("dependency-groups",),
    ("tool", "poetry", "dependencies"),
    ("tool", "poetry", "group"),
    ("tool", "pdm", "dev-dependencies"),
    ("tool", "uv"),
    ("tool", "hatch", "build", "hooks"),
    ("tool", "setuptools", "cmdclass"),
)
"""``pyproject.toml`` tables that decide what is installed or which build code runs."""


def dependency_tables(doc: Any) -> frozenset[str]:
    """Each present table of :data:`PYPROJECT_DEPENDENCY_TABLES`, with its value."""
    found: set[str] = set()
    for keys in PYPROJECT_DEPENDENCY_TABLES:
        value = _dig(doc, *keys)
        if value is not None:
            found.add(f"[{'.'.join(keys)}] {_dump(value)}")
    return frozenset(found)


_PLUGINS_LINE = re.compile(r"pytest_plugins")


def python_plugins(text: Any) -> frozenset[str]:
    """Each assignment to ``pytest_plugins`` in a Python module (``=``, annotated, ``+=``),
    with its value as source; a module that does not parse gives its lines naming
    ``pytest_plugins`` instead."""
    try:
        tree = ast.parse(str(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        lines = str(text).splitlines()
        return frozenset(ln.strip() for ln in lines if _PLUGINS_LINE.search(ln))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets: list[ast.expr] = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        if node.value is not None and any(
            isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets
        ):
            found.add(f"pytest_plugins = {ast.unparse(node.value)}")
    return frozenset(found)


def chimera_table(doc: Any) -> frozenset[str]:
    """``[tool.chimera]``, with its value."""
    value = _dig(doc, "tool", "chimera")
    return frozenset() if value is None else frozenset({f"[tool.chimera] {_dump(value)}"})


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    """Every mapping in ``node``, depth first, without recursion (a deep document is data)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def renovate_tasks(doc: Any) -> frozenset[str]:
    """Renovate's ``postUpgradeTasks`` (commands run after an upgrade, at any level of the
    config), and ``automerge`` together with ``ignoreTests`` (a merge without passing tests)."""
    found: set[str] = set()
    automerge = ignore_tests = False
    for node in _walk(doc):
        if "postUpgradeTasks" in node:
            found.add(f"postUpgradeTasks: {_dump(node['postUpgradeTasks'])}")
        automerge = automerge or node.get("automerge") is True
        ignore_tests = ignore_tests or node.get("ignoreTests") is True
    if automerge and ignore_tests:
        found.add("automerge with ignoreTests")
    return frozenset(found)


def vscode_folder_open_tasks(doc: Any) -> frozenset[str]:
    """VS Code tasks that run when the folder is opened (``runOptions.runOn:
    "folderOpen"``), each with its whole definition."""
    tasks = _dig(doc, "tasks")
    found: set[str] = set()
    for task in tasks if isinstance(tasks, list) else []:
        if isinstance(task, dict) and _dig(task, "runOptions", "runOn") == "folderOpen":
            found.add(f"folderOpen task: {_dump(task)}")
    return frozenset(found)


def readthedocs_commands(doc: Any) -> frozenset[str]:
    """Read the Docs' ``build.commands`` and ``build.jobs.<step>`` commands."""
    found: set[str] = set()
    commands = _dig(doc, "build", "commands")
    if commands is not None:
        found.add(f"build.commands: {_dump(commands)}")
    jobs = _dig(doc, "build", "jobs")
    if isinstance(jobs, dict):
        found.update(f"build.jobs.{k}: {_dump(v)}" for k, v in jobs.items())
    elif jobs is not None:
        found.add(f"build.jobs: {_dump(jobs)}")
    return frozenset(found)
