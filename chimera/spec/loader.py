"""Loading and validating a Spec: YAML files in, a :class:`~chimera.spec.model.Spec` out.

Two entry points share one validation pass:

* :func:`load_spec` (the CLI's): the spec is one unit; any problem in any file raises
  :class:`~chimera.errors.SpecError` carrying every problem found.
* :func:`load_spec_files` (the pytest plugin's): problems are kept per file, and the Spec
  holds the files that have none, so the other files' requirements still run.

Every problem is a :class:`~chimera.errors.SpecProblem` (``file:line:col: message``, 1-based)
pointing at the offending YAML node: malformed YAML (the parser's marker), duplicate keys
(the first occurrence named), unknown fields at every level (with a difflib suggestion),
zero or two checks, wrong types and enum values (allowed values listed), invalid ids,
duplicate ids (both places named), ``depends_on`` naming an unknown id (with a suggestion),
dependency cycles (the cycle named) and backslashes in globs and paths. A pydantic error
inside a kind is mapped back to its node through the error's ``loc``. Nothing here raises
a traceback for bad input.
"""

from __future__ import annotations

import difflib
import itertools
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
)

from chimera.errors import SpecError, SpecProblem, UsageError
from chimera.spec.kinds._fields import NO_BACKSLASH_PATTERN, Glob
from chimera.spec.model import Check, Requirement, Risk, SourceLocation, Spec, SpecFile
from chimera.spec.registry import COMMON_FIELDS, KindRegistry, get_registry
from chimera.spec.yamlload import Mark, NodePath, YamlDocument, parse_yaml, type_name

__all__ = [
    "ID_PATTERN",
    "SPEC_SUFFIXES",
    "RequirementFields",
    "SpecLoad",
    "discover_spec_files",
    "display_path",
    "load_spec",
    "load_spec_files",
]

SPEC_SUFFIXES = (".yaml", ".yml")
"""File suffixes a spec directory contributes."""

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
"""A requirement id: safe in pytest node ids (``file::id``), shell arguments and URLs."""

_ID_RE = re.compile(ID_PATTERN)
_TOP_LEVEL_KEYS = ("requirements",)

PathArg = str | os.PathLike[str]


# --------------------------------------------------------------------------- common fields


def _check_id(value: str) -> str:
    if not _ID_RE.match(value):
        raise ValueError(
            f"invalid id {value!r}: an id starts with a letter or digit and continues with "
            "letters, digits, '_', '.' or '-'"
        )
    return value


def _one_or_many(value: object) -> object:
    """Accept a single string where a list of strings is expected."""
    return [value] if isinstance(value, str) else value


RequirementId = Annotated[
    str, AfterValidator(_check_id), Field(json_schema_extra={"pattern": ID_PATTERN})
]


def _string_or_list_schema(item: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [item, {"type": "array", "items": item}]}


class RequirementFields(BaseModel):
    """Fields every requirement carries besides its one check (the kind key)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="Requirement")

    id: RequirementId = Field(
        description=(
            "Unique id across the whole spec directory; the pytest node id is "
            "'<spec file>::<id>'. Letters, digits, '_', '.', '-'."
        ),
    )
    title: str | None = Field(default=None, description="Human title shown in reports.")
    risk: Risk = Field(
        default=Risk.LOW,
        description=(
            "How much human attention a change needs: 'high' opens a draft PR that waits "
            "for a maintainer's approval."
        ),
    )
    depends_on: Annotated[
        list[RequirementId],
        BeforeValidator(_one_or_many),
        WithJsonSchema(_string_or_list_schema({"type": "string", "pattern": ID_PATTERN})),
    ] = Field(
        default_factory=list,
        description="Ids of requirements this one builds on (one id or a list).",
    )
    owner: Annotated[
        list[Glob],
        BeforeValidator(_one_or_many),
        WithJsonSchema(_string_or_list_schema({"type": "string", "pattern": NO_BACKSLASH_PATTERN})),
    ] = Field(
        default_factory=list,
        description=(
            "Path scope (a gitignore-style glob, or a list of them, '/' separators) used to "
            "build ownership-scoped context."
        ),
    )


# --------------------------------------------------------------------------- discovery


def _as_path_list(paths: PathArg | Sequence[PathArg]) -> list[Path]:
    if isinstance(paths, str | os.PathLike):
        return [Path(paths)]
    return [Path(p) for p in paths]


def discover_spec_files(paths: PathArg | Sequence[PathArg]) -> list[Path]:
    """The spec files named by ``paths``, in argument order, each once.

    A file is taken as is (whatever its suffix). A directory contributes every ``*.yaml`` /
    ``*.yml`` file under it, recursively, sorted by relative path, skipping hidden
    directories and hidden files (names starting with '.') below it and not following
    symlinked directories (no loops).

    Raises:
        UsageError: a path does not exist, or is neither a file nor a directory.
    """
    found: list[Path] = []
    seen: set[str] = set()

    def add(path: Path) -> None:
        key = os.path.normcase(os.path.realpath(path))
        if key not in seen:
            seen.add(key)
            found.append(path)

    for path in _as_path_list(paths):
        if path.is_dir():
            for child in _walk_spec_dir(path):
                add(child)
        elif path.is_file():
            add(path)
        elif path.exists() or path.is_symlink():
            kind = "a broken symlink" if not path.exists() else "not a file or directory"
            raise UsageError(f"spec path {path.as_posix()} is {kind}")
        else:
            raise UsageError(f"spec path not found: {path.as_posix()}")
    return found


def _walk_spec_dir(directory: Path) -> list[Path]:
    files: list[tuple[tuple[str, ...], Path]] = []
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        base = Path(dirpath)
        for name in filenames:
            if name.startswith(".") or not name.endswith(SPEC_SUFFIXES):
                continue
            candidate = base / name
            # A broken link stays in the list: reading it reports the problem, so its
            # requirements never vanish silently.
            if candidate.is_file() or (candidate.is_symlink() and not candidate.exists()):
                files.append((candidate.relative_to(directory).parts, candidate))
    files.sort(key=lambda item: item[0])
    return [p for _, p in files]


def display_path(path: Path, cwd: Path | None = None) -> str:
    """``path`` as shown in problems: relative to ``cwd`` when under it, else absolute.

    Always POSIX separators, so messages read the same on every OS.
    """
    # normpath, not resolve(): a symlinked spec directory keeps the name the user gave it.
    absolute = Path(os.path.normpath(Path(path).absolute()))
    try:
        base = Path(os.path.normpath((cwd if cwd is not None else Path.cwd()).absolute()))
    except OSError:  # the working directory was removed
        return absolute.as_posix()
    try:
        return absolute.relative_to(base).as_posix()
    except ValueError:
        return absolute.as_posix()


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class SpecLoad:
    """What :func:`load_spec_files` returns.

    Attributes:
        files: every spec file discovered, in order.
        spec: the requirements of the files without problems.
        problems: the problems of each invalid file (in line order); valid files are absent.
    """

    files: list[Path]
    spec: Spec
    problems: dict[Path, list[SpecProblem]]

    @property
    def ok(self) -> bool:
        """True when no file has a problem."""
        return not self.problems

    def all_problems(self) -> list[SpecProblem]:
        """Every problem, files in discovery order, each file's problems in line order."""
        return [p for path in self.files for p in self.problems.get(path, [])]


def load_spec(paths: PathArg | Sequence[PathArg], *, registry: KindRegistry | None = None) -> Spec:
    """Load and validate the whole Spec as one unit (the CLI's entry).

    Args:
        paths: spec files and/or directories (see :func:`discover_spec_files`).
        registry: requirement kinds; default :func:`chimera.spec.registry.get_registry`.

    Returns:
        The validated Spec (ids unique, dependencies known and acyclic).

    Raises:
        UsageError: a path does not exist.
        SpecError: any file has any problem; ``.problems`` lists every one found.
        PluginError: the default registry could not be built.
    """
    loaded = load_spec_files(paths, registry=registry)
    if loaded.problems:
        raise SpecError(loaded.all_problems())
    return loaded.spec


def load_spec_files(
    paths: PathArg | Sequence[PathArg], *, registry: KindRegistry | None = None
) -> SpecLoad:
    """Load and validate spec files, keeping problems per file (the pytest plugin's entry).

    Cross-file problems land on one file: a duplicate id on the later occurrence's file; an
    unknown ``depends_on`` id on the file that names it; a dependency cycle on the file of
    the requirement where the cycle is first found (files and requirements in order). Ids
    declared in an invalid file still count as known, so a valid file depending on them
    still loads.

    Raises:
        UsageError: a path does not exist.
        PluginError: the default registry could not be built.
    """
    files = discover_spec_files(paths)
    kinds = registry if registry is not None else get_registry()
    validated = [_FileValidator(path, kinds).run() for path in files]
    _cross_file_checks(validated)

    spec_files: list[SpecFile] = []
    problems: dict[Path, list[SpecProblem]] = {}
    for result in validated:
        if result.problems:
            problems[result.path] = result.sorted_problems()
        else:
            requirements = tuple(e.requirement for e in result.entries if e.requirement)
            spec_files.append(SpecFile(result.path, requirements))
    return SpecLoad(files=files, spec=Spec(tuple(spec_files)), problems=problems)


# --------------------------------------------------------------------------- one file


@dataclass
class _Entry:
    """One requirement mapping of a file, valid or not."""

    result: _FileResult
    mark: Mark
    id: str | None = None
    id_mark: Mark | None = None
    depends_on: list[tuple[str, Mark]] = field(default_factory=list)
    requirement: Requirement | None = None


@dataclass
class _FileResult:
    path: Path
    display: str
    problems: list[SpecProblem] = field(default_factory=list)
    entries: list[_Entry] = field(default_factory=list)

    def add(self, mark: Mark | None, message: str) -> None:
        # One problem, one line: a plugin's validator message may span several.
        message = " ".join(message.split("\n"))
        if mark is None:
            self.problems.append(SpecProblem(self.display, 0, 0, message))
        else:
            self.problems.append(SpecProblem(self.display, mark.line, mark.col, message))

    def location(self, mark: Mark) -> str:
        return f"{self.display}:{mark.line}:{mark.col}"

    def sorted_problems(self) -> list[SpecProblem]:
        return sorted(self.problems, key=lambda p: (p.line, p.col))


def _suggest(word: str, candidates: Sequence[str]) -> str | None:
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


class _FileValidator:
    def __init__(self, path: Path, registry: KindRegistry) -> None:
        self.registry = registry
        self.result = _FileResult(path, display_path(path))
        self.doc = YamlDocument()

    def run(self) -> _FileResult:
        text = self._read()
        if text is None:
            return self.result
        self.doc = parse_yaml(text)
        for issue in self.doc.issues:
            self.result.add(issue.mark, issue.message)
        if self.doc.syntax_error:
            return self.result
        self._top_level()
        return self.result

    def _read(self) -> str | None:
        path = self.result.path
        try:
            raw = path.read_bytes()
        except OSError as exc:
            self.result.add(None, f"cannot read spec file: {exc.strerror or exc}")
            return None
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line_start = raw.rfind(b"\n", 0, exc.start) + 1
            line = raw.count(b"\n", 0, exc.start) + 1
            col = len(raw[line_start : exc.start].decode("utf-8", "replace")) + 1
            self.result.add(
                Mark(line, col),
                f"not UTF-8 text: byte {raw[exc.start]:#04x} cannot be decoded",
            )
            return None

    def _top_level(self) -> None:
        doc, value = self.doc, self.doc.value
        if doc.empty:
            self.result.add(
                Mark(1, 1), "empty spec file: expected a mapping with 'requirements:' (a list)"
            )
            return
        if value is None and doc.issues:
            return  # the YAML issue (an alias bomb, a bad tag) already explains it
        if not isinstance(value, dict):
            self.result.add(
                doc.mark(()),
                f"a spec file must be a mapping with 'requirements:', got {type_name(value)}",
            )
            return
        unknown = [key for key in value if key not in _TOP_LEVEL_KEYS]
        for key in unknown:
            self.result.add(
                doc.key_mark((key,)),
                _unknown_field_message(key, "at the top level", _TOP_LEVEL_KEYS),
            )
        if "requirements" not in value:
            # A misspelt or unreadable key already explains the missing entry.
            if not unknown and not doc.issues:
                self.result.add(doc.mark(()), "missing 'requirements:' (a list of requirements)")
            return
        requirements = value["requirements"]
        if ("requirements",) in doc.broken:
            return  # its YAML issue is already reported
        if not isinstance(requirements, list):
            self.result.add(
                doc.mark(("requirements",)),
                f"'requirements' must be a list of requirements, got {type_name(requirements)}",
            )
            return
        for index, item in enumerate(requirements):
            self._requirement(("requirements", index), item)

    def _requirement(self, path: NodePath, value: object) -> None:
        doc, result = self.doc, self.result
        mark = doc.mark(path)
        if path in doc.broken:
            return
        if not isinstance(value, dict):
            result.add(
                mark,
                f"each requirement must be a mapping (id, one check, ...), got {type_name(value)}",
            )
            return
        entry = _Entry(result, mark)
        result.entries.append(entry)
        before = len(result.problems)

        kind_names = self.registry.names
        allowed = (*COMMON_FIELDS, *kind_names)
        common: dict[str, Any] = {}
        checks: list[str] = []
        misspelt_check = False
        for key, item in value.items():
            if key in COMMON_FIELDS:
                common[key] = item
            elif key in self.registry:
                checks.append(key)
            else:
                suggestion = _suggest(key, allowed)
                if suggestion is None and isinstance(item, dict):
                    # Shaped like a check: most likely a kind whose plugin is not installed.
                    message = (
                        f"unknown check kind {key!r} (installed kinds: "
                        f"{', '.join(kind_names)}); is the plugin that provides it installed?"
                    )
                    misspelt_check = True
                else:
                    message = _unknown_field_message(key, "in requirement", allowed, suggestion)
                    misspelt_check = misspelt_check or suggestion in kind_names
                result.add(doc.key_mark((*path, key)), message)

        fields = self._common_fields(path, common, entry)

        if not checks:
            if not misspelt_check:
                result.add(
                    mark,
                    f"requirement {_id_label(entry.id)}has no check: add exactly one of "
                    f"{', '.join(sorted(kind_names))}",
                )
        elif len(checks) > 1:
            placed = ", ".join(
                f"'{name}' at line {doc.key_mark((*path, name)).line}" for name in checks
            )
            result.add(
                doc.key_mark((*path, checks[1])),
                f"requirement {_id_label(entry.id)}has {len(checks)} checks ({placed}): "
                "keep exactly one",
            )

        built: list[Check] = []
        for name in checks:
            check = self._check(path, name, value[name])
            if check is not None:
                built.append(check)

        if len(result.problems) == before and fields is not None and len(built) == 1:
            entry.requirement = Requirement(
                id=fields.id,
                check=built[0],
                location=SourceLocation(result.display, mark.line, mark.col),
                title=fields.title,
                risk=fields.risk,
                depends_on=tuple(dict.fromkeys(fields.depends_on)),
                owner=tuple(fields.owner),
                field_locations={key: self._location((*path, key)) for key in value},
            )

    def _location(self, path: NodePath) -> SourceLocation:
        mark = self.doc.key_mark(path)
        return SourceLocation(self.result.display, mark.line, mark.col)

    def _common_fields(
        self, path: NodePath, common: dict[str, Any], entry: _Entry
    ) -> RequirementFields | None:
        doc = self.doc
        # Record id and depends_on even when other fields are wrong: cross-file checks
        # (duplicates, unknown ids, cycles) use every id the spec declares.
        raw_id = common.get("id")
        if isinstance(raw_id, str) and _ID_RE.match(raw_id):
            entry.id = raw_id
            entry.id_mark = doc.mark((*path, "id"))
        raw_deps = common.get("depends_on")
        if isinstance(raw_deps, str):
            entry.depends_on = [(raw_deps, doc.mark((*path, "depends_on")))]
        elif isinstance(raw_deps, list):
            entry.depends_on = [
                (dep, doc.mark((*path, "depends_on", i)))
                for i, dep in enumerate(raw_deps)
                if isinstance(dep, str) and _ID_RE.match(dep)
            ]
        try:
            return RequirementFields.model_validate(common)
        except ValidationError as exc:
            for mark, message in _pydantic_problems(exc, doc, path, "", RequirementFields):
                if message.startswith("missing required field 'id'"):
                    message = "requirement is missing its 'id'"
                self.result.add(mark, message)
            return None

    def _check(self, path: NodePath, name: str, value: object) -> Check | None:
        kind = self.registry.get(name)
        assert kind is not None  # callers pass registered names only
        kind_path = (*path, name)
        try:
            return kind.model_validate(value)
        except ValidationError as exc:
            for mark, message in _pydantic_problems(exc, self.doc, kind_path, name, kind):
                self.result.add(mark, message)
        except Exception as exc:  # a plugin's validator raised something pydantic does not wrap
            self.result.add(
                self.doc.mark(kind_path),
                f"'{name}': the kind's validation failed: {type(exc).__name__}: {exc}",
            )
        return None


def _id_label(requirement_id: str | None) -> str:
    return f"'{requirement_id}' " if requirement_id else ""


def _unknown_field_message(
    key: str, where: str, allowed: Sequence[str], suggestion: str | None = None
) -> str:
    if suggestion is None:
        suggestion = _suggest(key, allowed)
    if suggestion is not None:
        return f"unknown field {key!r} {where}; did you mean '{suggestion}'?"
    return f"unknown field {key!r} {where} (expected one of: {', '.join(allowed)})"


# --------------------------------------------------------------------------- pydantic errors

_NO_INPUT = object()
_MAPPING_ERRORS = frozenset({"model_type", "model_attributes_type", "dict_type"})
_MESSAGE_PREFIXES = ("Value error, ", "Assertion failed, ")


def _loc_label(base: str, loc: Sequence[str | int]) -> str:
    text = base
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text = f"{text}.{part}" if text else part
    return text


def _shown(value: object) -> str:
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _pydantic_problems(
    exc: ValidationError,
    doc: YamlDocument,
    base: NodePath,
    label: str,
    model: type[BaseModel],
) -> Iterator[tuple[Mark, str]]:
    """Map each pydantic error onto the YAML node its ``loc`` names, with a clear message."""
    owner = f"'{label}'" if label else "requirement"
    errors = exc.errors(include_url=False)
    # A misspelt field shows up twice in pydantic (unknown 'sybmol', missing 'symbol');
    # the suggestion already says it, so the "missing" half is dropped.
    suggested: set[tuple[str | int, ...]] = set()
    for error in errors:
        loc = tuple(error["loc"])
        if error["type"] == "extra_forbidden" and loc and isinstance(loc[-1], str):
            hit = _suggest(loc[-1], _field_names_at(model, loc[:-1]))
            if hit is not None:
                suggested.add((*loc[:-1], hit))
    for error in errors:
        loc = tuple(part for part in error["loc"] if isinstance(part, str | int))
        path = (*base, *loc)
        kind = error["type"]
        if any(prefix in doc.broken for prefix in _prefix_paths(path)):
            continue  # the YAML layer reported this value already
        if kind == "missing" and loc in suggested:
            continue
        message = str(error["msg"])
        for prefix in _MESSAGE_PREFIXES:
            if message.startswith(prefix):
                message = message[len(prefix) :]
        where = _loc_label(label, loc)

        if kind == "extra_forbidden" and loc and isinstance(loc[-1], str):
            allowed = _field_names_at(model, loc[:-1])
            parent = f"'{_loc_label(label, loc[:-1])}'" if loc[:-1] else owner
            yield (
                doc.key_mark(path),
                _unknown_field_message(loc[-1], f"in {parent}", allowed or []),
            )
        elif kind == "missing" and loc:
            parent = f"'{_loc_label(label, loc[:-1])}'" if loc[:-1] else owner
            yield doc.mark(path[:-1]), f"missing required field '{loc[-1]}' in {parent}"
        elif kind in _MAPPING_ERRORS:
            fields = _field_names_at(model, loc)
            listed = f" ({', '.join(fields)})" if fields else ""
            yield (
                doc.mark(path),
                f"'{where}' must be a mapping of its fields{listed}, "
                f"got {type_name(error.get('input'))}",
            )
        elif kind in {"value_error", "assertion_error"}:
            yield doc.mark(path), f"{where}: {message}" if where else message
        else:
            shown = error.get("input", _NO_INPUT)
            # A container's value would only repeat "got a list"; scalars are worth showing.
            got = (
                ""
                if isinstance(shown, dict | list) or shown is _NO_INPUT
                else f", got {_shown(shown)}"
            )
            yield doc.mark(path), f"{where}: {message}{got}" if where else message + got


def _prefix_paths(path: NodePath) -> Iterator[NodePath]:
    for end in range(len(path), 0, -1):
        yield path[:end]


def _field_names_at(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The YAML keys (aliases) of the model reached by following ``loc`` from ``model``."""
    candidates: list[Any] = [model]
    for part in loc:
        nxt: list[Any] = []
        for ann in _expand(candidates):
            if isinstance(part, str) and isinstance(ann, type) and issubclass(ann, BaseModel):
                for name, info in ann.model_fields.items():
                    if part in (name, info.alias):
                        nxt.append(info.annotation)
            elif isinstance(part, int):
                args = get_args(ann)
                if get_origin(ann) in (list, tuple, set, frozenset) and args:
                    nxt.append(args[0])
            elif get_origin(ann) is dict and len(get_args(ann)) == 2:
                nxt.append(get_args(ann)[1])
        candidates = nxt
    for ann in _expand(candidates):
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return [info.alias or name for name, info in ann.model_fields.items()]
    return []


def _expand(annotations: list[Any]) -> Iterator[Any]:
    """Unwrap ``Annotated``, ``Optional`` and unions into their member types."""
    for ann in annotations:
        origin = get_origin(ann)
        if origin is Annotated:
            yield from _expand([get_args(ann)[0]])
        elif origin is Union or origin is UnionType:
            yield from _expand(list(get_args(ann)))
        else:
            yield ann


# --------------------------------------------------------------------------- across files


def _cross_file_checks(results: list[_FileResult]) -> None:
    entries = [e for r in results for e in r.entries]
    first: dict[str, _Entry] = {}
    for entry in entries:
        if entry.id is None or entry.id_mark is None:
            continue
        earlier = first.get(entry.id)
        if earlier is None:
            first[entry.id] = entry
            continue
        assert earlier.id_mark is not None
        entry.result.add(
            entry.id_mark,
            f"duplicate id '{entry.id}': already defined at "
            f"{earlier.result.location(earlier.id_mark)}",
        )

    known = sorted(first)
    for entry in entries:
        for dep, mark in entry.depends_on:
            if dep in first:
                continue
            suggestion = _suggest(dep, known)
            hint = f"; did you mean '{suggestion}'?" if suggestion else ""
            entry.result.add(mark, f"depends_on names unknown id '{dep}'{hint}")

    _report_cycles([first[i] for i in first], first)


def _report_cycles(order: list[_Entry], by_id: dict[str, _Entry]) -> None:
    """Find dependency cycles with an iterative DFS (requirements in file order).

    A cycle is reported once, on the requirement of the cycle the search reached first, at
    its ``depends_on`` entry leading into the cycle: ``dependency cycle: a -> b -> a``.
    """
    white, grey, black = 0, 1, 2
    color = dict.fromkeys(by_id, white)
    reported: set[frozenset[tuple[str, str]]] = set()
    for start in order:
        assert start.id is not None
        if color[start.id] != white:
            continue
        stack: list[tuple[str, Iterator[tuple[str, Mark]]]] = [(start.id, iter(start.depends_on))]
        color[start.id] = grey
        while stack:
            node, edges = stack[-1]
            for dep, _mark in edges:
                if dep not in by_id:
                    continue
                if color[dep] == white:
                    color[dep] = grey
                    stack.append((dep, iter(by_id[dep].depends_on)))
                    break
                if color[dep] == grey:
                    ids = [n for n, _ in stack]
                    cycle = [*ids[ids.index(dep) :], dep]
                    edge_set = frozenset(itertools.pairwise(cycle))
                    if edge_set not in reported:
                        reported.add(edge_set)
                        _report_cycle(cycle, by_id)
            else:
                color[node] = black
                stack.pop()


def _report_cycle(cycle: list[str], by_id: dict[str, _Entry]) -> None:
    head = by_id[cycle[0]]
    nxt = cycle[1]
    mark = next((m for dep, m in head.depends_on if dep == nxt), head.mark)
    head.result.add(mark, f"dependency cycle: {' -> '.join(cycle)}")
