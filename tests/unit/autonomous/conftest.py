"""Fixtures for AutonomousAgent tests: a real git repository with a YAML spec, a run folder
with a real audit log, and helpers that build scripted turns."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chimera.config import AgentConfig
from chimera.core.autonomous import AutonomousAgent
from chimera.core.deps import AgentDeps
from chimera.governance.audit import AuditLog
from chimera.memory.experience import ExperienceBuffer
from chimera.protocols import SupportsComplete
from chimera.runner import CommandRunner, LocalRunner
from chimera.spec.loader import load_spec

SPEC = """\
requirements:
  - id: total-defined
    title: calc has total()
    owner: ['calc.py']
    defines: {path: calc.py, symbol: total, kind: function}
  - id: keeps-add
    defines: {path: calc.py, symbol: add, kind: function}
  - id: readme-ok
    contains: {path: README.md, pattern: 'Calc', regex: false}
"""

CALC = "def add(a, b):\n    return a + b\n"
CALC_WITH_TOTAL = CALC + "\n\ndef total(xs):\n    return sum(xs)\n"


@dataclass
class Env:
    root: Path
    run_dir: Path
    audit: AuditLog
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def agent(
        self,
        ladder: Sequence[SupportsComplete],
        *,
        runner: CommandRunner | None = None,
        experience: ExperienceBuffer | None = None,
        review: bool = True,
        **config: Any,
    ) -> AutonomousAgent:
        deps = AgentDeps(
            ladder=tuple(ladder),
            runner=runner or LocalRunner(),
            audit=self.audit,
            experience=experience,
            events=lambda e, f: self.events.append((e, f)),
        )
        return AutonomousAgent(
            deps,
            workspace=self.root,
            spec=load_spec([self.root / "specs"]),
            run_dir=self.run_dir,
            config=AgentConfig(**config),
            review=review,
        )

    def audit_events(self, name: str | None = None) -> list[dict[str, Any]]:
        lines = (self.run_dir / "audit.jsonl").read_text(encoding="utf-8").splitlines()
        entries = [json.loads(line) for line in lines]
        return [e for e in entries if name is None or e["event"] == name]

    def git_status(self) -> str:
        out = subprocess.run(
            ["git", "status", "--porcelain"], cwd=self.root, capture_output=True, text=True
        )
        return out.stdout


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def make_env(tmp_path: Path) -> Callable[..., Env]:
    def make(spec: str = SPEC, files: dict[str, str] | None = None) -> Env:
        root = tmp_path / "repo"
        root.mkdir()
        (root / "specs").mkdir()
        (root / "specs" / "reqs.yaml").write_text(spec)
        (root / ".gitignore").write_text(".chimera/\n")
        for rel, text in ({"calc.py": CALC, "README.md": "# Calc\n"} | (files or {})).items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(
            root,
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-q",
            "-m",
            "base",
        )
        run_dir = root / ".chimera" / "runs" / "r1"
        return Env(root, run_dir, AuditLog(run_dir / "audit.jsonl", "r1"))

    return make


# -- scripted turns ----------------------------------------------------------------------------


def plan(text: str = "1. Add total() to calc.py.", **kw: Any) -> dict[str, Any]:
    return {"purpose": "plan", "text": text, **kw}


def replan(text: str = "1. A different approach.", **kw: Any) -> dict[str, Any]:
    return {"purpose": "replan", "text": text, **kw}


def write(path: str, content: str, **kw: Any) -> dict[str, Any]:
    return {
        "purpose": "act",
        "tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}],
        **kw,
    }


def done(text: str = "Done.", **kw: Any) -> dict[str, Any]:
    return {"purpose": "act", "text": text, **kw}


def review(text: str = "APPROVE") -> dict[str, Any]:
    return {"purpose": "review", "text": text}


class Turns:
    """Scripted-turn builders, handed to tests as the ``t`` fixture."""

    plan = staticmethod(plan)
    replan = staticmethod(replan)
    write = staticmethod(write)
    done = staticmethod(done)
    review = staticmethod(review)
    CALC = CALC
    CALC_WITH_TOTAL = CALC_WITH_TOTAL


@pytest.fixture
def t() -> type[Turns]:
    return Turns
