"""What ``chimera connectors list|check|add`` do, as typed calls returning report objects.

* :func:`check_connectors` — validate every declaration (every problem at file:line:col);
  with ``start``, open each connector and list its tools too.
* :func:`list_connectors` — open every connector and report each tool: its name, its source
  (connector and remote name), whether it sends data out or is quarantined, and the token
  cost of the schemas the model is sent (by the named model's tokenizer, or estimated).
* :func:`add_connector` — write one declaration file, validated by reading it back.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from chimera.errors import SpecProblem, UsageError
from chimera.integrations.hub import ConnectorHub, estimate_tokens, schema_of
from chimera.integrations.loader import CONNECTORS_DIR, ConnectorLoad, load_connectors
from chimera.integrations.model import CONNECTOR_NAME, ConnectorContext
from chimera.integrations.registry import ConnectorKindRegistry
from chimera.localstate import make_dirs

__all__ = ["ConnectorsReport", "ToolRow", "add_connector", "check_connectors", "list_connectors"]


@dataclass(frozen=True)
class ToolRow:
    """One tool in a report (``tokens``: its schema's cost)."""

    name: str
    connector: str
    remote: str
    sends: bool
    quarantined: bool
    tokens: int


@dataclass
class ConnectorsReport:
    """Declarations, tools and problems; ``exit_code``: 0 clean, 1 a connector failed to
    start or two tools clash, 2 a declaration is invalid."""

    load: ConnectorLoad
    tools: list[ToolRow] = field(default_factory=list)
    runtime_problems: list[str] = field(default_factory=list)
    started: bool = False
    token_counter: str = "estimate (4 chars/token)"

    @property
    def exit_code(self) -> int:
        if self.load.problems:
            return 2
        return 1 if self.runtime_problems else 0

    @property
    def total_tokens(self) -> int:
        return sum(t.tokens for t in self.tools)

    def to_json(self) -> dict[str, Any]:
        return {
            "connectors": [
                {
                    "name": d.name,
                    "kind": d.kind.kind_name,
                    "reaches": d.kind.describe(),
                    "credentials": list(d.kind.credentials()),
                    "declared_at": str(d.location),
                }
                for d in self.load.connectors
            ],
            "tools": [t.__dict__ for t in self.tools],
            "schema_tokens": self.total_tokens if self.started else None,
            "token_counter": self.token_counter,
            "problems": [str(p) for p in self.load.problems] + self.runtime_problems,
        }

    def render(self) -> str:
        lines: list[str] = []
        for d in self.load.connectors:
            creds = (
                f"; credentials: {', '.join(d.kind.credentials())}" if d.kind.credentials() else ""
            )
            lines.append(f"{d.name} ({d.kind.kind_name}): {d.kind.describe()}{creds}")
        if not self.load.connectors and not self.load.problems:
            lines.append(f"no connectors declared (in {CONNECTORS_DIR}/*.yaml)")
        if self.started:
            width = max((len(t.name) for t in self.tools), default=4)
            for t in self.tools:
                flags = ("sends" if t.sends else "reads") + (
                    ", quarantined" if t.quarantined else ""
                )
                lines.append(
                    f"  {t.name:<{width}}  {t.connector}:{t.remote}  {flags}  {t.tokens} tokens"
                )
            lines.append(
                f"{len(self.tools)} tool(s); schemas cost {self.total_tokens} tokens "
                f"({self.token_counter})"
            )
        lines.extend(str(p) for p in self.load.problems)
        lines.extend(self.runtime_problems)
        return "\n".join(lines)


def _tokens(schema: Any, model: str | None) -> int:
    if model is None:
        return estimate_tokens([schema])
    from chimera.providers.pricing import count_tokens

    return count_tokens(model, [], tools=[schema])


def check_connectors(
    root: Path,
    *,
    start: bool = False,
    model: str | None = None,
    rev: str | None = None,
    environ: Mapping[str, str] | None = None,
    sandbox: Literal["bwrap", "scrubbed"] = "bwrap",
    registry: ConnectorKindRegistry | None = None,
) -> ConnectorsReport:
    """Validate the declarations; with ``start``, open them and report their tools.

    Raises:
        PluginError: a connector plugin failed to load.
        MissingExtraError / ProviderError: token counting for ``model`` is unavailable.
    """
    load = load_connectors(root, rev=rev, registry=registry)
    load.problems.extend(_missing_files(Path(root), load, rev))
    report = ConnectorsReport(load)
    if not start or load.problems:
        return report
    report.started = True
    if model is not None:
        report.token_counter = f"{model} tokenizer"
    ctx = ConnectorContext(root=root, environ=environ, sandbox=sandbox)
    with ConnectorHub(load.connectors, ctx) as hub:
        opened = hub.tools()
        report.runtime_problems.extend(opened.problems)
        for item in opened.tools:
            report.tools.append(
                ToolRow(
                    name=item.name,
                    connector=item.connector,
                    remote=item.remote,
                    sends=item.sends,
                    quarantined=item.quarantined,
                    tokens=_tokens(schema_of(item.tool), model),
                )
            )
    return report


def _missing_files(root: Path, load: ConnectorLoad, rev: str | None) -> list[SpecProblem]:
    """A problem per project file a declaration names that does not exist (in the working
    tree, or at ``rev``), at the declaration's place: found without starting anything."""
    problems: list[SpecProblem] = []
    for decl in load.connectors:
        for field_name, rel in decl.kind.files():
            if rev is None:
                present = (root / rel).is_file()
            else:
                probe = subprocess.run(
                    ["git", "-C", str(root), "cat-file", "-e", f"{rev}:{rel}"],
                    capture_output=True,
                    check=False,
                )
                present = probe.returncode == 0
            if not present:
                where = "in the project" if rev is None else f"at {rev}"
                loc = decl.location
                problems.append(
                    SpecProblem(
                        loc.file,
                        loc.line,
                        loc.col,
                        f"connector '{decl.name}': {field_name}: {rel}: no such file {where}",
                    )
                )
    return problems


def list_connectors(root: Path, **options: Any) -> ConnectorsReport:
    """:func:`check_connectors` with ``start=True``."""
    return check_connectors(root, start=True, **options)


def add_connector(
    root: Path,
    name: str,
    kind: Literal["mcp", "openapi"],
    settings: Mapping[str, Any],
    *,
    description: str = "",
    include: Sequence[str] = (),
    registry: ConnectorKindRegistry | None = None,
) -> Path:
    """Write ``.chimera.d/connectors/<name>.yaml`` and return its path.

    Raises:
        UsageError: a bad name, the file or the name exists already, or the declaration is
            invalid (the first problem, at file:line:col; the file is then not kept).
    """
    if not CONNECTOR_NAME.match(name):
        raise UsageError(f"{name!r} is not a connector name (lowercase letters, digits, '_')")
    existing = load_connectors(root, registry=registry)
    if any(d.name == name for d in existing.connectors):
        raise UsageError(f"a connector named {name!r} is already declared")
    path = Path(root) / CONNECTORS_DIR / f"{name}.yaml"
    if path.exists():
        raise UsageError(f"{path.relative_to(root)} exists already")
    entry: dict[str, Any] = {"name": name}
    if description:
        entry["description"] = description
    entry[kind] = {k: v for k, v in settings.items() if v not in (None, [], (), {})}
    if include:
        entry["tools"] = {"include": list(include)}
    make_dirs(path.parent)
    path.write_text(yaml.safe_dump({"connectors": [entry]}, sort_keys=False), encoding="utf-8")
    check = load_connectors(root, registry=registry)
    mine = [p for p in check.problems if p.file.endswith(f"/{name}.yaml")]
    if mine:
        path.unlink()
        raise UsageError(str(mine[0]))
    return path


def dumps(report: ConnectorsReport) -> str:
    return json.dumps(report.to_json(), indent=2, sort_keys=False)
