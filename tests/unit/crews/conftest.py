"""Helpers for crew tests: a crew from YAML text, scripted models per role, a real audit log."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chimera.crews.agent import RoleBackends
from chimera.crews.crew import CrewResult, CrewRuntime
from chimera.crews.loader import load_crew
from chimera.crews.model import CrewDefinition
from chimera.governance.audit import AuditLog
from chimera.protocols import ToolCaller
from chimera.providers import ScriptedBackend, TokenBudget


@dataclass
class CrewEnv:
    tmp: Path
    audit: AuditLog
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def crew(self, text: str) -> CrewDefinition:
        path = self.tmp / "crew.yaml"
        path.write_text(text, encoding="utf-8")
        return load_crew(path)

    def run(
        self,
        definition: CrewDefinition,
        task: str,
        scripts: Mapping[str, list[dict[str, Any]]],
        *,
        budget: TokenBudget | None = None,
        tools: ToolCaller | None = None,
    ) -> tuple[CrewResult, dict[str, ScriptedBackend], RoleBackends]:
        models = {name: ScriptedBackend(turns, name=name) for name, turns in scripts.items()}
        backends = RoleBackends(
            definition,
            run_budget=budget or TokenBudget(name="run"),
            make=lambda m: models[m],
            default_model="default",
            audit=self.audit,
            max_tokens=64,
        )
        runtime = CrewRuntime(
            backends.for_role, tools, self.audit, lambda e, f: self.events.append((e, f))
        )
        return definition.build().run(task, runtime), models, backends

    def audit_events(self, name: str) -> list[dict[str, Any]]:
        lines = self.audit.path.read_text(encoding="utf-8").splitlines()
        return [e["fields"] for e in map(json.loads, lines) if e["event"] == name]


@pytest.fixture
def env(tmp_path: Path) -> CrewEnv:
    return CrewEnv(tmp_path, AuditLog(tmp_path / "run" / "audit.jsonl", "r1"))
