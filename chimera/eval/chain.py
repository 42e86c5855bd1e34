"""Benchmark chains: tasks given to Chimera in order, each a Spec delta on a small project.

A chain file (YAML) names a project folder beside it and a list of tasks::

    name: inflection-chain
    project: inflection            # a folder beside this file: the tree every run starts from
    max_attempts: 1                # attempts per task
    tasks:
      - id: t01
        family: ordinals           # a label for the scorecard
        task: "Add inflection_extra/ordinal_word.py with ordinal_word(n) ..."
        requirements:              # the Spec delta: ordinary requirements, red before the task
          - id: t01-behaves
            command: {run: "python -c 'import ...; assert ...'", timeout: 60}
        path: inflection_extra/ordinal_word.py    # for the scripted model (below)
        right: "def ordinal_word(n): ..."
        wrong: "def ordinal_word(n): return str(n)"
        needs: "[ordinal-rule]"    # the scripted model writes `right` only when this text is
                                   # in its plan prompt (a recalled memory item); "" = always
        trap: false                # true: the scripted model always writes `wrong`

The **scripted** model of a task is generated from ``path``/``right``/``wrong``/``needs``/
``trap`` (:func:`scripted_turns`), so the effect of memory on a chain is known in advance and
a harness run with it measures Chimera's bookkeeping, never a model. With a real model the
same tasks go to that model and the scripted fields are ignored.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from chimera.spec.reqfields import ID_PATTERN
from chimera.spec.yamlmodel import load_yaml_model

# The Spec's id grammar (one for every id a person writes in a YAML file).
_ID = re.compile(ID_PATTERN)


class ChainTask(BaseModel):
    """One task of a chain (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    family: str = "default"
    task: str = Field(min_length=1)
    requirements: list[dict[str, Any]] = Field(min_length=1)
    path: str | None = None
    right: str | None = None
    wrong: str | None = None
    needs: str = ""
    trap: bool = False

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("ids use letters, digits, '_', '.' and '-'")
        return value

    @property
    def requirement_ids(self) -> list[str]:
        return [str(r.get("id", "")) for r in self.requirements]

    @property
    def scripted(self) -> bool:
        return self.path is not None and self.right is not None and self.wrong is not None


class Chain(BaseModel):
    """A benchmark chain; :meth:`load` reads one with ``file:line:col`` errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    project: str
    max_attempts: int = Field(default=1, ge=1, le=10)
    tasks: list[ChainTask] = Field(min_length=1)
    source: Path = Path()

    @model_validator(mode="after")
    def _unique(self) -> Chain:
        seen: set[str] = set()
        for task in self.tasks:
            for ident in (task.id, *task.requirement_ids):
                if ident in seen:
                    raise ValueError(f"id {ident!r} is used twice in the chain")
                seen.add(ident)
        return self

    @classmethod
    def load(cls, path: Path) -> Chain:
        """Read a chain file.

        Raises:
            ConfigError: ``file:line:col: key: message`` for any problem, or a missing project.
        """
        from chimera.errors import ConfigError

        chain = load_yaml_model(path, cls, what="the chain", expected="name, project and tasks")
        project = path.parent / chain.project
        if not project.is_dir():
            raise ConfigError(f"{path}: project: no folder {chain.project!r} beside the chain")
        return chain.model_copy(update={"source": path})

    @property
    def project_dir(self) -> Path:
        return self.source.parent / self.project

    def task(self, task_id: str) -> ChainTask:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)


PLAN_RIGHT = "Plan: follow the recalled convention."
PLAN_WRONG = "Plan: write the simplest version."


def scripted_turns(task: ChainTask, *, attempts: int = 1) -> list[dict[str, Any]]:
    """The scripted model's turns for up to ``attempts`` attempts at ``task``.

    The plan turn is a choice (``when``/``unless``): when ``needs`` is in the plan prompt —
    a memory item was recalled — the plan says so, and each act turn that follows writes
    ``right``; otherwise it writes ``wrong``. A ``trap`` task always writes ``wrong`` (it is
    the failure whose lesson later tasks can recall). A wrong write fails the same way each
    time, so from the second repeat on the agent replans (the carry-forward rule); the
    scripted replan keeps the wrong plan, so retries cannot rescue a task by luck.

    Raises:
        ValueError: the task has no ``path``/``right``/``wrong`` to script.
    """
    if not task.scripted:
        raise ValueError(f"task {task.id} has no path/right/wrong for a scripted model")
    right = not task.trap and not task.needs
    turns: list[dict[str, Any]]
    if task.trap or right:
        turns = [{"purpose": "plan", "text": PLAN_RIGHT if right else PLAN_WRONG}]
    else:
        turns = [
            {"purpose": "plan", "when": [task.needs], "text": PLAN_RIGHT},
            {"purpose": "plan", "unless": [task.needs], "text": PLAN_WRONG},
        ]
    for number in range(1, attempts + 1):
        if number >= 3:  # attempt 2 repeated attempt 1's signature: a replan comes first
            turns.append({"purpose": "replan", "text": PLAN_WRONG})
        for text, content in ((PLAN_RIGHT, task.right), (PLAN_WRONG, task.wrong)):
            call = {"name": "write_file", "arguments": {"path": task.path, "content": content}}
            turns.append({"purpose": "act", "when": [text], "tool_calls": [call]})
        turns.append({"purpose": "act", "text": f"Wrote {task.path}."})
    return turns
