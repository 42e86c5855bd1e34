"""``--agent PROFILE.yaml``: the session part that makes every agent of a run the profile's.

:class:`ProfilePart` has the session factory's ``SessionPart`` shape (``attach(session)``,
``agent_deps(deps, session)``). The profile's model, budget and kind settings are
configuration, applied before the session is prepared (:meth:`Profile.overrides`); this part
applies the rest to each agent:

* **tools** — the native registry narrowed to the profile's allowlist *before* the run's
  governance wraps it, so a tool outside the list is neither shown nor callable (the model
  gets ``unknown tool``), whatever the model asks;
* **instructions and skills** — added to the system message of every model call
  (:class:`InstructedBackend`); skills come from the project's skill store and are rendered
  as guidance (a tainted skill fenced as data);
* **review** — a review crew named by the profile replaces the manager review
  (:class:`~chimera.crews.review.CrewsPart`).

Every session records ``meta.profile`` in its audit log.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.core.deps import AgentDeps, PartSession, ToolWrapper
from chimera.crews.review import CrewsPart
from chimera.errors import UsageError
from chimera.meta.profile import Profile
from chimera.protocols import (
    Completion,
    Message,
    Purpose,
    SupportsComplete,
    ToolCaller,
    ToolSchema,
)

if TYPE_CHECKING:
    from chimera.tools import ToolRegistry

__all__ = ["SKILLS_DIR", "InstructedBackend", "ProfilePart", "narrow"]

SKILLS_DIR = Path(".chimera") / "skills"


def narrow(registry: ToolRegistry, allowed: Sequence[str]) -> ToolRegistry:
    """A registry holding only the tools of ``registry`` named in ``allowed``."""
    from chimera.tools import ToolRegistry

    out = ToolRegistry()
    for name in registry.names():
        if name in allowed:
            out.register(registry.get(name))
    return out


def _wrapper(allowed: tuple[str, ...], inner: ToolWrapper | None) -> ToolWrapper:
    def wrap(registry: ToolRegistry) -> ToolCaller:
        narrowed = narrow(registry, allowed)
        return narrowed if inner is None else inner(narrowed)

    return wrap


class InstructedBackend:
    """``inner`` with ``text`` appended to the first system message of every call (or sent as
    one when a call has none). ``model`` and ``inner`` stay visible to the run's bookkeeping
    (model names, replay cursors)."""

    def __init__(self, inner: SupportsComplete, text: str) -> None:
        self.inner = inner
        self.text = text
        self.model = str(getattr(inner, "model", "") or type(inner).__name__)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        out = [dict(m) for m in messages]
        system = next((m for m in out if m.get("role") == "system"), None)
        if system is None:
            out.insert(0, {"role": "system", "content": self.text})
        else:
            system["content"] = f"{system.get('content') or ''}\n\n{self.text}"
        return self.inner.complete(out, tools=tools, purpose=purpose, max_tokens=max_tokens)


class ProfilePart:
    """The session part of ``--agent`` (module docstring).

    Args:
        profile: the validated profile (its tools already isolated when it was designed).
    """

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._text: dict[str, str] = {}
        self._crew = CrewsPart(profile.fields.review) if profile.fields.review else None

    def attach(self, session: PartSession) -> None:
        """Read the profile's skills and review crew once (before any agent edits the tree).

        Raises:
            UsageError: a skill or the review crew does not exist.
            CrewError / ConfigError: the review crew is invalid.
        """
        from chimera.evolution.skills import SkillStore

        store = SkillStore(session.root / SKILLS_DIR)
        skills: list[tuple[str, str]] = []
        for name in self.profile.fields.skills:
            skill = store.get(name)
            if skill is None:
                raise UsageError(
                    f"{self.profile.source}: skill {name!r} is not in {SKILLS_DIR.as_posix()}/"
                )
            skills.append((name, skill.render()))
        self._text[session.run_id] = self.profile.system_text(skills)
        if self._crew is not None:
            self._crew.attach(session)
        session.audit.append(
            "meta.profile",
            profile=self.profile.name,
            source=self.profile.source,
            kind=self.profile.kind.kind_name,
            tools=list(self.profile.tools),
            skills=[n for n, _ in skills],
            review=self.profile.fields.review,
        )

    def agent_deps(self, deps: AgentDeps, session: PartSession) -> AgentDeps:
        """``deps`` with the profile's tool allowlist, instructions and reviewer applied."""
        text = self._text.get(session.run_id, "")
        ladder = deps.ladder
        if text:
            ladder = tuple(InstructedBackend(b, text) for b in ladder)
        deps = dataclasses.replace(
            deps, ladder=ladder, tool_wrapper=_wrapper(self.profile.tools, deps.tool_wrapper)
        )
        if self._crew is not None:
            deps = self._crew.agent_deps(deps, session)
        return deps
