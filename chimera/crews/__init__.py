"""Crews: roles working together on the same engine as every run.

* :class:`Role` / :class:`RoleAgent`: the tool-calling Agent under one role (goal,
  instructions, a read-only tool allowlist, a model or ladder rung, its own budget).
* :class:`SequentialCrew`, :class:`ParallelCrew`, :class:`SupervisorCrew`: how roles work
  together, selected by a crew file's kind key (pluggable: :mod:`chimera.crews.registry`).
* :func:`consolidate`: outputs merged — agreements, disagreements and unique findings with
  their roles, repeats dropped, under a token budget — never concatenated.
* :class:`ReviewCrew` / :class:`CrewsPart`: a crew as every agent's manager review.

Crew files live in ``.chimera.d/crews/*.yaml`` (:func:`load_crew`, :func:`check_crew_file`).
Every call goes through a budgeted backend and the audit log; nothing is sent anywhere else.
"""

from __future__ import annotations

from chimera.crews.agent import FilteredTools, RoleAgent, RoleBackends, RoleOutput
from chimera.crews.consolidate import Consolidation, consolidate
from chimera.crews.crew import (
    Crew,
    CrewResult,
    CrewRuntime,
    CrewStatus,
    ParallelCrew,
    SequentialCrew,
    SupervisorCrew,
)
from chimera.crews.loader import CREWS_DIR, check_crew_file, discover_crews, load_crew
from chimera.crews.model import CrewDefinition, CrewKind, Role, RoleBudget
from chimera.crews.review import CrewsPart, ReviewCrew

__all__ = [
    "CREWS_DIR",
    "Consolidation",
    "Crew",
    "CrewDefinition",
    "CrewKind",
    "CrewResult",
    "CrewRuntime",
    "CrewStatus",
    "CrewsPart",
    "FilteredTools",
    "ParallelCrew",
    "ReviewCrew",
    "Role",
    "RoleAgent",
    "RoleBackends",
    "RoleBudget",
    "RoleOutput",
    "SequentialCrew",
    "SupervisorCrew",
    "check_crew_file",
    "consolidate",
    "discover_crews",
    "load_crew",
]
