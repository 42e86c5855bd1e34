"""The session parts every surface plugs in: one list, built in one place.

``chimera solve``, ``run``, ``resume``, ``approve`` and the GitHub Action's agent child all get
their :class:`~chimera.orchestration.session_factory.SessionFactory` from
:func:`default_factory`, so a run gets the same packages whichever way it was started:

1. :class:`~chimera.memory.part.MemoryPart` — every attempt recorded as an episodic memory
   item; each plan step recalls persona and the nearest memories within a context budget.
2. :class:`~chimera.evolution.learned_context.EvolutionPart` — learned skills and the playbook
   in each plan / replan prompt (after memory: it reads the session's experience store).
3. :class:`~chimera.evolution.reflection.ReflectionPart` — at the end of a finished run, the
   Reflector and the Curator propose playbook and skill deltas (provisional, tainted; recorded
   in ``.chimera/learning/proposals.jsonl``, never applied by themselves).
4. :class:`~chimera.crews.review.CrewsPart` — the review crew of ``[tool.chimera.review]
   crew`` as every agent's reviewer (nothing when none is configured).
5. :class:`~chimera.integrations.part.ConnectorsPart` — the connectors declared in
   ``.chimera.d/connectors/`` (only when that folder exists; read at ``HEAD``).

``--no-memory`` (``memory=False``) leaves memory out; ``--no-skills`` (``learning=False``)
leaves out skills, the playbook and reflection and keeps memory; ``--no-learning`` sets both
(a run without learning neither recalls nor is shaped by anything learned). ``--no-reflection``
leaves out only the ReflectionPart: measurement runs (``chimera bench``) keep memory, skills
and the playbook but spend no tokens on, and propose no lessons from, the tasks they measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.config import ChimeraConfig
from chimera.orchestration.session_factory import SessionFactory, SessionPart

if TYPE_CHECKING:
    from chimera.memory.budget import ContextBudget

MEMORY_TOKENS = 2000
"""The plan prompt's budget for persona plus memory (split by :class:`ContextBudget`)."""


def context_budget() -> ContextBudget:
    """The one context budget the memory and learning parts split (tokens per plan prompt)."""
    from chimera.memory.budget import ContextBudget

    return ContextBudget(total_tokens=MEMORY_TOKENS)


def default_parts(
    config: ChimeraConfig,
    *,
    root: Path,
    memory: bool = True,
    learning: bool = True,
    reflection: bool = True,
) -> list[SessionPart]:
    """The session parts of a run on ``root`` (see the module docstring for the order).

    ``memory=False`` (``--no-memory``, Action input ``memory: false``) leaves memory out;
    ``learning=False`` (``--no-skills``) leaves out skills, the playbook and reflection, and
    memory stays unless ``memory`` is False too (``--no-learning``); ``reflection=False``
    (``--no-reflection``) leaves out only the end-of-run Reflector and Curator. ``config`` is the
    effective configuration (crews read ``review.crew`` from the session's own copy).
    """
    from chimera.crews.review import CrewsPart
    from chimera.evolution.learned_context import EvolutionPart
    from chimera.integrations.loader import CONNECTORS_DIR
    from chimera.memory.part import MemoryPart

    del config  # each part reads the session's configuration when it attaches
    parts: list[SessionPart] = []
    if memory:
        parts.append(MemoryPart(budget=context_budget()))
    if learning:
        from chimera.evolution.reflection import ReflectionPart

        evolution = EvolutionPart(budget=context_budget())
        parts.append(evolution)
        if reflection:
            parts.append(ReflectionPart(evolution))
    parts.append(CrewsPart())
    if (root / CONNECTORS_DIR).is_dir():
        from chimera.integrations.part import ConnectorsPart

        parts.append(ConnectorsPart())
    return parts


def default_factory(
    factory: SessionFactory | None,
    config: ChimeraConfig,
    *,
    root: Path,
    memory: bool = True,
    learning: bool = True,
    reflection: bool = True,
    extra: Sequence[SessionPart] = (),
) -> SessionFactory:
    """``factory`` when the caller brought one, else a factory of :func:`default_parts`
    (then ``extra``)."""
    if factory is not None:
        return factory
    parts = default_parts(
        config, root=root, memory=memory, learning=learning, reflection=reflection
    )
    return SessionFactory([*parts, *extra])


__all__ = ["MEMORY_TOKENS", "context_budget", "default_factory", "default_parts"]
