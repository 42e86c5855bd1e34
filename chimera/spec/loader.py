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

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from chimera.errors import SpecError, SpecProblem
from chimera.spec.crossfile import FileEntry, FileResult, cross_file_checks
from chimera.spec.discovery import SPEC_SUFFIXES, PathArg, discover_spec_files, display_path
from chimera.spec.fieldproblems import pydantic_problems, suggest, unknown_field_message
from chimera.spec.model import Check, Requirement, SourceLocation, Spec, SpecFile
from chimera.spec.registry import COMMON_FIELDS, KindRegistry, get_registry
from chimera.spec.reqfields import ID_PATTERN, ID_RE, CommonFields, RequirementFields, plain_fields
from chimera.spec.yamlload import Mark, NodePath, YamlDocument, parse_yaml, type_name

if TYPE_CHECKING:
    from chimera.spec.parsecache import ParseCache

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

_TOP_LEVEL_KEYS = ("requirements",)
_COMMON = frozenset(COMMON_FIELDS)

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


def load_spec(
    paths: PathArg | Sequence[PathArg],
    *,
    registry: KindRegistry | None = None,
    parse_cache: ParseCache | None = None,
) -> Spec:
    """Load and validate the whole Spec as one unit (the CLI's entry).

    Args:
        paths: spec files and/or directories (see :func:`discover_spec_files`).
        registry: requirement kinds; default :func:`chimera.spec.registry.get_registry`.
        parse_cache: parsed files to reuse (:mod:`chimera.spec.parsecache`); validation
            runs either way, so the result and every problem are the same.

    Returns:
        The validated Spec (ids unique, dependencies known and acyclic).

    Raises:
        UsageError: a path does not exist.
        SpecError: any file has any problem; ``.problems`` lists every one found.
        PluginError: the default registry could not be built.
    """
    loaded = load_spec_files(paths, registry=registry, parse_cache=parse_cache)
    if loaded.problems:
        raise SpecError(loaded.all_problems())
    return loaded.spec


def load_spec_files(
    paths: PathArg | Sequence[PathArg],
    *,
    registry: KindRegistry | None = None,
    parse_cache: ParseCache | None = None,
) -> SpecLoad:
    """Load and validate spec files, keeping problems per file (the pytest plugin's entry).

    Cross-file problems land on one file: a duplicate id on the later occurrence's file; an
    unknown ``depends_on`` id on the file that names it; a dependency cycle on the file of
    the requirement where the cycle is first found (files and requirements in order). Ids
    declared in an invalid file still count as known, so a valid file depending on them
    still loads. ``parse_cache`` as in :func:`load_spec`.

    Raises:
        UsageError: a path does not exist.
        PluginError: the default registry could not be built.
    """
    files = discover_spec_files(paths)
    kinds = registry if registry is not None else get_registry()
    validated = [_FileValidator(path, kinds, parse_cache).run() for path in files]
    cross_file_checks(validated)

    spec_files: list[SpecFile] = []
    problems: dict[Path, list[SpecProblem]] = {}
    for result in validated:
        if result.problems:
            problems[result.path] = result.sorted_problems()
        else:
            requirements = tuple(e.requirement for e in result.entries if e.requirement)
            spec_files.append(SpecFile(result.path, requirements))
        # Each entry points back at its file result: without this the pair is a reference
        # cycle, and thousands of entries wait for (and slow) the cyclic GC's next full pass.
        result.entries.clear()
    return SpecLoad(files=files, spec=Spec(tuple(spec_files)), problems=problems)


# --------------------------------------------------------------------------- one file


class _FileValidator:
    def __init__(
        self, path: Path, registry: KindRegistry, parse_cache: ParseCache | None = None
    ) -> None:
        self.registry = registry
        self.parse_cache = parse_cache
        self.result = FileResult(path, display_path(path))
        self.doc = YamlDocument()
        self.kind_names = registry.names
        self.allowed = (*COMMON_FIELDS, *self.kind_names)
        self.kinds = {name: registry.get(name) for name in self.kind_names}
        # One location object per position: a requirement's start and its first key's
        # share one (they are equal and frozen), and thousands fewer objects are made.
        self._sources: dict[Mark, SourceLocation] = {}

    def run(self) -> FileResult:
        text = self._read()
        if text is None:
            return self.result
        cache = self.parse_cache
        doc = cache.lookup(text) if cache is not None else None
        if doc is None:
            doc = parse_yaml(text)
            if cache is not None:
                cache.store(text, doc)
        self.doc = doc
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
                unknown_field_message(key, "at the top level", _TOP_LEVEL_KEYS),
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
        entry = FileEntry(result, mark)
        result.entries.append(entry)
        before = len(result.problems)

        kind_names, allowed = self.kind_names, self.allowed
        common: dict[str, Any] = {}
        checks: list[str] = []
        misspelt_check = False
        kinds = self.kinds
        for key, item in value.items():
            if key in _COMMON:
                common[key] = item
            elif key in kinds:
                checks.append(key)
            else:
                suggestion = suggest(key, allowed)
                if suggestion is None and isinstance(item, dict):
                    # Shaped like a check: most likely a kind whose plugin is not installed.
                    message = (
                        f"unknown check kind {key!r} (installed kinds: "
                        f"{', '.join(kind_names)}); is the plugin that provides it installed?"
                    )
                    misspelt_check = True
                else:
                    message = unknown_field_message(key, "in requirement", allowed, suggestion)
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
                location=self._source(mark),
                title=fields.title,
                risk=fields.risk,
                depends_on=fields.depends_on,
                owner=fields.owner,
                field_locations={key: self._source(doc.key_mark((*path, key))) for key in value},
            )

    def _source(self, mark: Mark) -> SourceLocation:
        found = self._sources.get(mark)
        if found is None:
            found = self._sources[mark] = SourceLocation(self.result.display, *mark)
        return found

    def _common_fields(
        self, path: NodePath, common: dict[str, Any], entry: FileEntry
    ) -> CommonFields | None:
        doc = self.doc
        # Record id and depends_on even when other fields are wrong: cross-file checks
        # (duplicates, unknown ids, cycles) use every id the spec declares.
        raw_id = common.get("id")
        if isinstance(raw_id, str) and ID_RE.match(raw_id):
            entry.id = raw_id
            entry.id_mark = doc.mark((*path, "id"))
        raw_deps = common.get("depends_on")
        if isinstance(raw_deps, str):
            entry.depends_on = [(raw_deps, doc.mark((*path, "depends_on")))]
        elif isinstance(raw_deps, list):
            entry.depends_on = [
                (dep, doc.mark((*path, "depends_on", i)))
                for i, dep in enumerate(raw_deps)
                if isinstance(dep, str) and ID_RE.match(dep)
            ]
        if entry.id is not None:
            plain = plain_fields(common)
            if plain is not None:
                return plain
        try:
            fields = RequirementFields.model_validate(common)
        except ValidationError as exc:
            for mark, message in pydantic_problems(exc, doc, path, "", RequirementFields):
                if message.startswith("missing required field 'id'"):
                    message = "requirement is missing its 'id'"
                self.result.add(mark, message)
            return None
        return CommonFields(
            fields.id,
            fields.title,
            fields.risk,
            tuple(dict.fromkeys(fields.depends_on)),
            tuple(fields.owner),
        )

    def _check(self, path: NodePath, name: str, value: object) -> Check | None:
        kind = self.kinds[name]
        assert kind is not None  # callers pass registered names only
        kind_path = (*path, name)
        try:
            return kind.model_validate(value)
        except ValidationError as exc:
            for mark, message in pydantic_problems(exc, self.doc, kind_path, name, kind):
                self.result.add(mark, message)
        except Exception as exc:  # a plugin's validator raised something pydantic does not wrap
            self.result.add(
                self.doc.mark(kind_path),
                f"'{name}': the kind's validation failed: {type(exc).__name__}: {exc}",
            )
        return None


def _id_label(requirement_id: str | None) -> str:
    return f"'{requirement_id}' " if requirement_id else ""
