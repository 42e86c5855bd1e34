"""Reading ``.chimera.d/connectors/*.yaml``: one validation pass, every problem at file:line:col.

:func:`load_connectors` never raises for bad input: it returns a :class:`ConnectorLoad` whose
``problems`` lists every problem of every file (malformed YAML, duplicate keys, unknown fields,
zero or two kinds, a kind no plugin provides, pydantic errors inside a kind mapped to their
node, duplicate connector names with both places named), and whose ``connectors`` holds the
declarations that have none.

``rev`` reads the files from a git commit instead of the working tree. Autonomous runs and
the Action read the *base* commit, never a tree the agent has written to: a connector decides
what leaves the machine, so an agent must not be able to declare one for itself.
"""

from __future__ import annotations

import difflib
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from chimera.errors import MissingExtraError, SpecProblem
from chimera.integrations.model import COMMON_FIELDS, ConnectorDecl, ConnectorFields
from chimera.integrations.registry import ConnectorKindRegistry, get_connector_registry
from chimera.spec.model import SourceLocation
from chimera.spec.yamlload import Mark, NodePath, YamlDocument, parse_yaml, type_name
from chimera.spec.yamlproblems import fields_at

__all__ = ["CONNECTORS_DIR", "ConnectorLoad", "load_connectors"]

CONNECTORS_DIR = ".chimera.d/connectors"
"""Where declarations live, relative to the project root."""


@dataclass
class ConnectorLoad:
    """The outcome of reading every declaration file.

    Attributes:
        connectors: the valid declarations, in file then document order.
        problems: every problem found (``file:line:col: message``), in file order.
        files: the files read (display paths, relative to the root).
        rev: the commit they were read from (``None``: the working tree).
    """

    connectors: list[ConnectorDecl] = field(default_factory=list)
    problems: list[SpecProblem] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    rev: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, check=False, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None


def _sources(root: Path, rev: str | None) -> Iterator[tuple[str, str | None, str]]:
    """``(display path, text or None, why not)`` per declaration file, sorted by path."""
    if rev is None:
        folder = root / CONNECTORS_DIR
        paths = sorted(p for p in folder.glob("*.y*ml") if p.suffix in (".yaml", ".yml"))
        for path in paths:
            display = path.relative_to(root).as_posix()
            try:
                yield display, path.read_bytes().decode("utf-8-sig"), ""
            except (OSError, UnicodeDecodeError) as exc:
                yield display, None, f"cannot read: {exc}"
        return
    listing = _git(root, "ls-tree", "-z", "--name-only", f"{rev}:{CONNECTORS_DIR}")
    if listing is None:
        return  # no such folder in that commit (or no such commit: checked by the caller)
    for name in sorted(n for n in listing.split("\0") if n.endswith((".yaml", ".yml"))):
        display = f"{CONNECTORS_DIR}/{name}"
        text = _git(root, "show", f"{rev}:{display}")
        yield display, text, "" if text is not None else f"cannot read it from {rev}"


def load_connectors(
    root: Path, *, rev: str | None = None, registry: ConnectorKindRegistry | None = None
) -> ConnectorLoad:
    """Read and validate every declaration under ``root/.chimera.d/connectors``.

    Args:
        root: the project root.
        rev: a git commit to read the files from (``None``: the working tree).
        registry: the connector kinds (default: built-ins plus entry points).

    Raises:
        PluginError: a connector plugin failed to load (from the default registry).
    """
    kinds = registry if registry is not None else get_connector_registry()
    load = ConnectorLoad(rev=rev)
    if (
        rev is not None
        and _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}") is None
    ):
        load.problems.append(SpecProblem(str(root), 0, 0, f"no commit {rev!r} to read from"))
        return load
    seen: dict[str, SourceLocation] = {}
    for display, text, why in _sources(Path(root), rev):
        load.files.append(display)
        if text is None:
            load.problems.append(SpecProblem(display, 0, 0, why))
            continue
        validator = _FileValidator(display, parse_yaml(text), kinds)
        for decl in validator.run():
            first = seen.get(decl.name)
            if first is not None:
                where = decl.location
                validator.add(
                    Mark(where.line, where.col),
                    f"duplicate connector name {decl.name!r} (first declared at {first})",
                )
                continue
            seen[decl.name] = decl.location
            load.connectors.append(decl)
        load.problems.extend(sorted(validator.problems, key=lambda p: (p.line, p.col)))
    return load


class _FileValidator:
    def __init__(self, display: str, doc: YamlDocument, kinds: ConnectorKindRegistry) -> None:
        self.display = display
        self.doc = doc
        self.kinds = kinds
        self.problems: list[SpecProblem] = []

    def add(self, mark: Mark, message: str) -> None:
        self.problems.append(SpecProblem(self.display, mark.line, mark.col, message))

    def run(self) -> list[ConnectorDecl]:
        doc = self.doc
        for issue in doc.issues:
            self.add(issue.mark, issue.message)
        if doc.syntax_error or (doc.value is None and doc.issues):
            return []
        if doc.empty:
            self.add(Mark(1, 1), "empty file: expected 'connectors:' (a list of connectors)")
            return []
        value, base = doc.value, ("connectors",)
        if isinstance(value, dict):
            for key in value:
                if key != "connectors":
                    self.add(doc.key_mark((key,)), f"unknown field {key!r} (expected 'connectors')")
            if "connectors" not in value:
                self.add(doc.mark(()), "missing 'connectors:' (a list of connectors)")
                return []
            items = value["connectors"]
        else:
            self.add(doc.mark(()), f"expected a mapping with 'connectors:', got {type_name(value)}")
            return []
        if base in doc.broken:
            return []
        if not isinstance(items, list):
            self.add(doc.mark(base), f"'connectors' must be a list, got {type_name(items)}")
            return []
        built = [self._one((*base, i), item) for i, item in enumerate(items)]
        return [d for d in built if d is not None]

    def _one(self, path: NodePath, value: Any) -> ConnectorDecl | None:
        doc, mark = self.doc, self.doc.mark(path)
        if path in doc.broken:
            return None
        if not isinstance(value, dict):
            self.add(
                mark, f"each connector must be a mapping (name, one kind), got {type_name(value)}"
            )
            return None
        before = len(self.problems)
        common = {k: v for k, v in value.items() if k in COMMON_FIELDS}
        kinds = [k for k in value if k not in COMMON_FIELDS and k in self.kinds]
        suggested: set[str] = set()
        for key in value:
            if key not in COMMON_FIELDS and key not in self.kinds:
                allowed = (*COMMON_FIELDS, *self.kinds.names)
                close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
                suggested.update(close)
                hint = (
                    f"did you mean '{close[0]}'?"
                    if close
                    else f"expected one of: {', '.join(allowed)}; is the plugin that provides "
                    "it installed?"
                )
                self.add(
                    doc.key_mark((*path, key)), f"unknown field or connector kind {key!r}; {hint}"
                )
        if not kinds:
            if len(self.problems) == before:
                self.add(
                    mark, f"connector has no kind: add exactly one of {', '.join(self.kinds.names)}"
                )
        elif len(kinds) > 1:
            placed = ", ".join(f"'{k}' at line {doc.key_mark((*path, k)).line}" for k in kinds)
            self.add(
                doc.key_mark((*path, kinds[1])),
                f"connector has {len(kinds)} kinds ({placed}): keep exactly one",
            )
        # A misspelt field is reported once: "did you mean 'name'?" says it is missing too.
        fields = self._validate(ConnectorFields, common, path, skip_missing=suggested)
        built = [self._validate(self.kinds.kinds[k], value[k], (*path, k), k) for k in kinds]
        if len(self.problems) > before or fields is None or len(built) != 1 or built[0] is None:
            return None
        return ConnectorDecl(
            fields=fields,  # type: ignore[arg-type]
            kind=built[0],  # type: ignore[arg-type]
            location=SourceLocation(self.display, mark.line, mark.col),
        )

    def _validate(
        self,
        model: type[BaseModel],
        value: Any,
        path: NodePath,
        label: str = "",
        *,
        skip_missing: set[str] | None = None,
    ) -> BaseModel | None:
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            problems = _problems(exc, self.doc, path, label, model, skip_missing or set())
            for mark, message in problems:
                self.add(mark, message)
        except MissingExtraError:
            raise  # the install lacks an extra: not a problem of the user's file
        except Exception as exc:  # a plugin's validator raised something pydantic does not wrap
            self.add(
                self.doc.mark(path), f"'{label}': validation failed: {type(exc).__name__}: {exc}"
            )
        return None


def _problems(
    exc: ValidationError,
    doc: YamlDocument,
    base: NodePath,
    label: str,
    model: type[BaseModel],
    skip_missing: set[str],
) -> Iterator[tuple[Mark, str]]:
    for error in exc.errors(include_url=False):
        loc: Sequence[str | int] = tuple(p for p in error["loc"] if isinstance(p, str | int))
        path = (*base, *loc)
        if any(path[:end] in doc.broken for end in range(len(path), 0, -1)):
            continue
        where = ".".join(str(p) for p in (label, *loc) if p != "")
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            close = difflib.get_close_matches(
                str(loc[-1]), fields_at(model, loc[:-1]), n=1, cutoff=0.6
            )
            hint = f"; did you mean '{close[0]}'?" if close else ""
            yield doc.key_mark(path), f"unknown field {where!r}{hint}"
        elif error["type"] == "missing":
            if len(loc) == 1 and loc[0] in skip_missing:
                continue
            yield doc.mark(path[:-1]), f"missing required field {where!r}"
        else:
            got = error.get("input")
            shown = "" if isinstance(got, dict | list) or got is None else f", got {got!r}"
            yield doc.mark(path), f"{where}: {message}{shown}" if where else message + shown
