"""Reading crew files: every problem in one pass, each at ``file:line:col``, with suggestions.

The Spec loader's discipline, for crews: the YAML is parsed with positions
(:func:`~chimera.spec.yamlload.parse_yaml`: duplicate keys, bad tags and alias bombs are
problems, never silent), then the top level, every role and the one kind key are validated
and each pydantic error is mapped back to its YAML node. Nothing raises a traceback for bad
input: :func:`check_crew_file` returns the problems, :func:`load_crew` raises
:class:`~chimera.errors.CrewError` carrying all of them.
"""

from __future__ import annotations

from pathlib import Path

from chimera.crews.kindfile import KindFileValidator
from chimera.crews.model import (
    COMMON_FIELDS,
    READ_ONLY_TOOLS,
    ConsolidateSettings,
    CrewDefinition,
    CrewKind,
    Role,
    RoleBudget,
)
from chimera.crews.registry import CrewKindRegistry, get_crew_registry
from chimera.errors import CrewError, UsageError
from chimera.plugins import KindCheck
from chimera.spec.loader import display_path
from chimera.spec.yamlload import NodePath, parse_yaml, type_name
from chimera.spec.yamlproblems import node_label, unknown_message

__all__ = [
    "CREWS_DIR",
    "CrewCheck",
    "check_crew_file",
    "discover_crews",
    "load_crew",
    "resolve_crew",
]

CREWS_DIR = Path(".chimera.d") / "crews"
"""Where a project's crew files live (``NAME.yaml``)."""

_WRITE_TOOLS = ("write_file", "edit_file", "run_command")


class CrewCheck(KindCheck[CrewDefinition]):
    """One crew file's validation (:class:`~chimera.plugins.KindCheck`)."""

    @property
    def definition(self) -> CrewDefinition | None:
        """The valid crew (``value``), ``None`` when the file has a problem."""
        return self.value


def discover_crews(root: Path) -> list[Path]:
    """The crew files of the project at ``root`` (``.chimera.d/crews/*.yaml|yml``), sorted."""
    folder = root / CREWS_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def resolve_crew(root: Path, name: str) -> Path:
    """A crew named in configuration: a path (with ``/`` or a ``.yaml``/``.yml`` suffix,
    relative to ``root``) or a name in ``.chimera.d/crews/``.

    Raises:
        UsageError: no such file (the known crews listed).
    """
    if "/" in name or name.endswith((".yaml", ".yml")):
        path = root / name
    else:
        path = next(
            (p for p in (root / CREWS_DIR / f"{name}.{s}" for s in ("yaml", "yml")) if p.is_file()),
            root / CREWS_DIR / f"{name}.yaml",
        )
    if not path.is_file():
        known = ", ".join(p.stem for p in discover_crews(root)) or "none"
        raise UsageError(f"crew {name!r}: {path.as_posix()} not found (crews here: {known})")
    return path


def load_crew(path: Path, *, registry: CrewKindRegistry | None = None) -> CrewDefinition:
    """The validated crew in ``path``.

    Raises:
        CrewError: the file has problems; ``.problems`` lists every one.
        PluginError: the default kind registry could not be built.
    """
    checked = check_crew_file(path, registry=registry)
    if checked.definition is None:
        raise CrewError(checked.problems)
    return checked.definition


def check_crew_file(path: Path, *, registry: CrewKindRegistry | None = None) -> CrewCheck:
    """Validate ``path`` in one pass (see the module docstring); never raises for bad input.

    Raises:
        PluginError: the default kind registry could not be built.
    """
    return _Validator(Path(path), registry or get_crew_registry()).run()


class _Validator(KindFileValidator):
    def __init__(self, path: Path, registry: CrewKindRegistry) -> None:
        super().__init__(display_path(path), registry.names, COMMON_FIELDS)
        self.path = path
        self.registry = registry

    def run(self) -> CrewCheck:
        try:
            text = self.path.read_bytes().decode("utf-8-sig")
        except OSError as exc:
            self.add(None, f"cannot read crew file: {exc.strerror or exc}")
            return CrewCheck.of(self.source, None, self.problems)
        except UnicodeDecodeError as exc:
            self.add(None, f"not UTF-8 text: byte {exc.object[exc.start]:#04x} at {exc.start}")
            return CrewCheck.of(self.source, None, self.problems)
        self.doc = parse_yaml(text)
        for issue in self.doc.issues:
            self.add(issue.mark, issue.message)
        definition = None if self.doc.syntax_error else self._top()
        return CrewCheck.of(self.source, definition, self.problems)

    def _top(self) -> CrewDefinition | None:
        doc = self.doc
        value = self.top_mapping(
            "empty crew file: expected a mapping with 'roles:' and a kind", "a crew file"
        )
        if value is None:
            return None
        chosen, misspelt_kind = self.kind_keys(value)
        name = value.get("crew", self.path.stem)
        if not isinstance(name, str) or not name.strip():
            self.add(doc.mark(("crew",)), f"'crew' must be a name, got {type_name(name)}")
        description = value.get("description", "")
        if not isinstance(description, str):
            self.add(doc.mark(("description",)), "'description' must be text")
        budget = self.model(("budget",), RoleBudget, value.get("budget", {}))
        settings = self.model(("consolidate",), ConsolidateSettings, value.get("consolidate", {}))
        roles = self._roles(value.get("roles"))
        chosen_kind = self.one_kind(chosen, misspelt_kind)
        process: CrewKind | None = None
        if chosen_kind is not None:
            kind = self.registry.get(chosen_kind)
            assert kind is not None
            raw = value[chosen_kind]
            process = self.model((chosen_kind,), kind, {} if raw is None else raw)
            if process is not None and roles is not None:
                for sub, message in process.check_roles(roles):
                    self.add(doc.mark((chosen_kind, *sub)), message)
        if self.problems or None in (budget, settings, roles, process):
            return None
        assert isinstance(budget, RoleBudget) and isinstance(settings, ConsolidateSettings)
        assert roles is not None and process is not None and isinstance(name, str)
        return CrewDefinition(
            name=name,
            roles=tuple(roles),
            process=process,
            budget=budget,
            consolidate=settings,
            source=self.source,
            description=description if isinstance(description, str) else "",
        )

    def _roles(self, raw: object) -> list[Role] | None:
        doc = self.doc
        if raw is None:
            if ("roles",) not in doc.broken:
                self.add(doc.mark(()), "missing 'roles:' (a list of roles)")
            return None
        if not isinstance(raw, list) or not raw:
            self.add(
                doc.mark(("roles",)), f"'roles' must be a non-empty list, got {type_name(raw)}"
            )
            return None
        roles: list[Role] = []
        first: dict[str, NodePath] = {}
        ok = True
        for i, item in enumerate(raw):
            path: NodePath = ("roles", i)
            if isinstance(item, dict):
                self._tools(path, item.get("tools"))
                name = item.get("name")
                if isinstance(name, str) and name in first:
                    where = doc.mark((*first[name], "name"))
                    self.add(
                        doc.mark((*path, "name")),
                        f"duplicate role '{name}' (first defined at line {where.line})",
                    )
                elif isinstance(name, str):
                    first[name] = path
            role = self.model(path, Role, item)
            if isinstance(role, Role):
                roles.append(role)
            else:
                ok = False
        return roles if ok else None

    def _tools(self, path: NodePath, tools: object) -> None:
        if not isinstance(tools, list):
            return
        for j, tool in enumerate(tools):
            if not isinstance(tool, str) or tool in READ_ONLY_TOOLS:
                continue
            mark = self.doc.mark((*path, "tools", j))
            if tool in _WRITE_TOOLS:
                self.add(
                    mark,
                    f"tool '{tool}' changes the workspace; crew roles read and answer "
                    f"({', '.join(READ_ONLY_TOOLS)}): changes go through 'chimera solve'",
                )
            else:
                where = f"in '{node_label((*path, 'tools'))}'"
                self.add(mark, unknown_message(tool, where, READ_ONLY_TOOLS, what="tool"))
