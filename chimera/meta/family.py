"""A task family (``TASKS.yaml``): the tasks a designed agent is measured on.

Each task carries **visible** requirements (the candidates' Spec: in their workspace, their
prompt and their verification) and **held-out** requirements (kept from the designer and the
candidates, checked only after a candidate's runs are over, in a disposable copy)::

    family: slugs
    project: project            # a folder beside this file: the tree every run starts from
    heldout_files: heldout      # optional folder beside it, overlaid on the disposable copy
    designer:
      model: scripted:designer.yaml
      tools: [read_file, list_dir, search, write_file, edit_file]   # the designer's allowlist
      budget: {tokens: 20000}
      max_candidates: 3
    tasks:
      - id: slug-basic
        task: Add slugify(text) to slug.py.
        visible:
          - id: slug-visible
            command: {run: "python -m pytest -q tests/test_slug.py"}
        heldout:
          - id: slug-heldout
            command: {run: "python -m pytest -q heldout_test_slug.py"}

The designer's ``tools`` are the ceiling of every candidate's tools (tool isolation); the
designer itself reads with the read-only part of it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from chimera.errors import ConfigError, SpecError
from chimera.meta.profile import AGENT_TOOLS, ProfileBudget
from chimera.spec.reqfields import is_requirement_id
from chimera.spec.yamlload import parse_yaml
from chimera.spec.yamlmodel import load_yaml_model

__all__ = ["DesignerSettings", "FamilyTask", "TaskFamily"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DesignerSettings(_Model):
    """The designer run: its model, its own tool allowlist, its budget (required)."""

    model: str | None = Field(default=None, min_length=1)
    tools: list[str] = Field(default_factory=lambda: list(AGENT_TOOLS))
    budget: ProfileBudget
    max_candidates: int = Field(default=3, ge=1, le=8)
    max_steps: int = Field(default=8, ge=1, le=50)

    @field_validator("tools")
    @classmethod
    def _known(cls, tools: list[str]) -> list[str]:
        unknown = [t for t in tools if t not in AGENT_TOOLS]
        if unknown:
            raise ValueError(f"unknown tool(s) {unknown}; expected some of {list(AGENT_TOOLS)}")
        return tools

    @model_validator(mode="after")
    def _bounded(self) -> DesignerSettings:
        if self.budget.tokens is None and self.budget.usd is None:
            raise ValueError("the designer needs a budget: 'tokens' and/or 'usd'")
        return self


class FamilyTask(_Model):
    """One task: its words and its visible and held-out requirements (Spec mappings)."""

    id: str
    task: str = Field(min_length=1)
    visible: list[dict[str, Any]] = Field(min_length=1)
    heldout: list[dict[str, Any]] = Field(min_length=1)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        # The Spec's id grammar (one for every id a person writes in a YAML file).
        if not is_requirement_id(value):
            raise ValueError("ids use letters, digits, '_', '.' and '-'")
        return value

    @property
    def visible_ids(self) -> list[str]:
        return [str(r.get("id", "")) for r in self.visible]

    @property
    def heldout_ids(self) -> list[str]:
        return [str(r.get("id", "")) for r in self.heldout]


class TaskFamily(_Model):
    """A task family; :meth:`load` reads one with ``file:line:col`` errors."""

    family: str = Field(min_length=1)
    project: str
    heldout_files: str | None = None
    designer: DesignerSettings
    tasks: list[FamilyTask] = Field(min_length=1)
    source: Path = Path()

    @model_validator(mode="after")
    def _unique(self) -> TaskFamily:
        seen: set[str] = set()
        for task in self.tasks:
            for ident in (task.id, *task.visible_ids, *task.heldout_ids):
                if ident in seen:
                    raise ValueError(f"id {ident!r} is used twice in the family")
                seen.add(ident)
        return self

    @classmethod
    def load(cls, path: Path) -> TaskFamily:
        """Read a family file; every task's requirements are validated as a Spec.

        Raises:
            ConfigError: ``file:line:col: message`` for any problem, a missing folder, or a
                held-out folder inside the project (it would reach the candidates).
        """
        family = load_yaml_model(path, cls, what="the task family", expected="family and tasks")
        family = family.model_copy(update={"source": path})
        if not family.project_dir.is_dir():
            raise ConfigError(f"{path}: project: no folder {family.project!r} beside the file")
        extra = family.heldout_dir
        if extra is not None:
            if not extra.is_dir():
                raise ConfigError(f"{path}: heldout_files: no folder {family.heldout_files!r}")
            if extra.resolve().is_relative_to(family.project_dir.resolve()):
                raise ConfigError(
                    f"{path}: heldout_files: {family.heldout_files!r} is inside the project, "
                    "which every candidate sees; keep it beside the project"
                )
        family._check_requirements(path)
        return family

    def _check_requirements(self, path: Path) -> None:
        from chimera.spec.loader import load_spec

        doc = parse_yaml(path.read_text(encoding="utf-8-sig"))
        with tempfile.TemporaryDirectory(prefix="chimera-family-") as tmp:
            for i, task in enumerate(self.tasks):
                for side in ("visible", "heldout"):
                    spec = Path(tmp) / f"{task.id}-{side}.yaml"
                    reqs = getattr(task, side)
                    spec.write_text(yaml.safe_dump({"requirements": reqs}), encoding="utf-8")
                    try:
                        load_spec(spec)
                    except SpecError as exc:
                        mark = doc.mark(("tasks", i, side))
                        first = exc.problems[0].message if exc.problems else str(exc)
                        raise ConfigError(
                            f"{path}:{mark.line}:{mark.col}: tasks[{i}].{side}: {first}"
                        ) from exc

    @property
    def project_dir(self) -> Path:
        return self.source.parent / self.project

    @property
    def heldout_dir(self) -> Path | None:
        return None if self.heldout_files is None else self.source.parent / self.heldout_files
