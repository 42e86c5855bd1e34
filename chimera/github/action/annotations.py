"""GitHub Actions annotations: workflow commands (``::error file=…,line=…::message``) with
GitHub's escaping, for red requirements of a drift report and for the problems of an invalid
spec (``chimera check --format github``).

Plain-install code: ``chimera check`` imports it, so it needs nothing beyond the standard
library and the spec's types.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chimera.errors import SpecProblem
    from chimera.spec.model import Requirement
    from chimera.spec.results import DriftReport, RequirementResult

__all__ = [
    "annotation_target",
    "drift_annotations",
    "escape_data",
    "escape_property",
    "repo_relative",
    "spec_problem_annotations",
    "workflow_command",
    "workspace",
]


def escape_data(text: str) -> str:
    """Escape a workflow command's message (GitHub's rules: ``%``, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value (the data rules, plus ``:`` and ``,``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, message: str, properties: dict[str, str]) -> str:
    """``::command key=value,...::message`` with GitHub's escaping applied."""
    props = ",".join(f"{k}={escape_property(v)}" for k, v in properties.items())
    data = escape_data(message)
    return f"::{command} {props}::{data}" if props else f"::{command}::{data}"


def workspace() -> Path:
    """The repository checkout annotations are relative to (``GITHUB_WORKSPACE``, else the
    working directory), resolved."""
    return Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd()).resolve()


def repo_relative(path: Path, base: Path) -> str | None:
    """``path`` as a POSIX path relative to ``base``; ``None`` when it lies outside."""
    try:
        return path.resolve().relative_to(base).as_posix()
    except (ValueError, OSError):
        return None


def annotation_target(req: Requirement, result: RequirementResult, root: Path) -> dict[str, str]:
    """Where a red requirement's annotation points: its first evidence inside the checkout
    (``file``, ``line``, ``col``), else the requirement's place in the spec."""
    base = workspace()
    for ev in result.evidence:
        if ev.file is None:
            continue
        candidate = root / ev.file
        rel = repo_relative(candidate, base) if candidate.is_file() else None
        if rel is None:
            continue
        props = {"file": rel}
        if ev.line is not None:
            props["line"] = str(ev.line)
            if ev.col is not None:
                props["col"] = str(ev.col)
        return props
    loc = req.location
    rel = repo_relative(Path(loc.file), base)
    return {"file": rel or loc.file, "line": str(loc.line), "col": str(loc.col)}


def drift_annotations(report: DriftReport, *, root: Path, max_evidence: int) -> str:
    """One ``::error`` line per red requirement of ``report`` (at most ``max_evidence``
    evidence items in each message), newline-terminated; ``""`` when all pass."""
    lines: list[str] = []
    for result in report.red:
        req = result.requirement
        props = annotation_target(req, result, root)
        props["title"] = f"Chimera requirement {req.id} {result.status.value}"
        message = (f"{req.title}\n" if req.title else "") + (
            f"{req.check.describe()}\n{result.render(max_evidence=max_evidence)}\n"
            f"(spec: {req.location})"
        )
        lines.append(workflow_command("error", message, props) + "\n")
    return "".join(lines)


def spec_problem_annotations(problems: Sequence[SpecProblem]) -> str:
    """One ``::error`` line (titled ``invalid Chimera spec``) per problem of an invalid spec,
    at the problem's file, line and column, newline-terminated."""
    base = workspace()
    lines: list[str] = []
    for problem in problems:
        props = {"file": repo_relative(Path(problem.file), base) or problem.file}
        if problem.line:
            props["line"] = str(problem.line)
            props["col"] = str(problem.col)
        props["title"] = "invalid Chimera spec"
        lines.append(workflow_command("error", problem.message, props) + "\n")
    return "".join(lines)
