"""The MetaAgent: agents that design agents, with tool isolation and held-out evaluation.

* :class:`Profile` — a specialised agent as data (instructions, tool allowlist, model or
  ladder rung, budget, skills, review crew, one kind key), validated in one pass
  (:func:`load_profile`, :func:`check_profile_text`; kinds through pluggy:
  :mod:`chimera.meta.registry`).
* :func:`run_designer` — a budgeted, audited designer proposes candidates for a
  :class:`TaskFamily`, seeing visible requirements only.
* :mod:`chimera.meta.trial` — each candidate runs on each task (``chimera solve --agent``);
  held-out requirements are checked only afterwards, in a disposable copy.
* :mod:`chimera.meta.report` — visible and held-out rates with Wilson intervals, the gap,
  suspected reward hacking, flagged edits to visible checks, the choice on held-out.
* :class:`ProfilePart` — ``--agent``: the session part that applies a profile to every agent.

The run itself (``chimera meta design``) is :func:`chimera.orchestration.meta.design_agent`.
"""

from __future__ import annotations

from chimera.meta.designer import Design, parse_candidates, run_designer
from chimera.meta.family import DesignerSettings, FamilyTask, TaskFamily
from chimera.meta.loader import ProfileCheck, check_profile_file, check_profile_text, load_profile
from chimera.meta.part import InstructedBackend, ProfilePart
from chimera.meta.profile import AGENT_TOOLS, Profile, ProfileKind, Solver, isolate
from chimera.meta.registry import ProfileKindRegistry, get_profile_registry
from chimera.meta.report import CandidateReport, choose, score
from chimera.meta.trial import TaskTrial

__all__ = [
    "AGENT_TOOLS",
    "CandidateReport",
    "Design",
    "DesignerSettings",
    "FamilyTask",
    "InstructedBackend",
    "Profile",
    "ProfileCheck",
    "ProfileKind",
    "ProfileKindRegistry",
    "ProfilePart",
    "Solver",
    "TaskFamily",
    "TaskTrial",
    "check_profile_file",
    "check_profile_text",
    "choose",
    "get_profile_registry",
    "isolate",
    "load_profile",
    "parse_candidates",
    "run_designer",
    "score",
]
