"""verify's third verdict, ``paused``: a risky step verified, the rest of the goal waiting for a
person — re-derived from the base commit and the patch, never taken from the agent's word.

A run pauses after a risky card: the card's requirement passes and nothing broke, but the
change is risky, so the run waits for a person's approval before its remaining cards run
(DESIGN.md step 5). The agent job *says* so in its outcome; that claim is not evidence. verify
names a change ``paused`` only when it finds, itself:

* **the change is risky, judged from the base alone**: the patch deletes a file or touches a
  ``high_risk_paths`` glob of the base configuration, or a goal requirement that the base
  Spec or decide's acceptance block declares ``risk: high`` now passes. A spec file the patch
  adds declares nothing here: its author is the agent;
* **the risky step's requirements pass**: a goal requirement that step could have been working
  on passes after the patch, and so does every goal requirement it depends on (its card
  could not have run before theirs) — a ``risk: high`` one itself, or, for a risky path, any;
* **nothing else is wrong**: no requirement green on the base turned red, the Spec was not
  tampered with, the acceptance block was vetted; only goal requirements are still red.

Anything short of that stays ``failed``. publish pushes on ``passed`` or ``paused`` only, and
a pause always opens as a held draft labelled ``risk:high``; an approval resumes the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chimera.github.scan.paths import PatchUnreadable, read_changes
from chimera.github.trust.chain import patch_risk
from chimera.protocols import Risk
from chimera.spec.model import Requirement

__all__ = ["Pause", "find_pause"]


@dataclass(frozen=True)
class Pause:
    """Why a change is a legitimate pause.

    Attributes:
        risk: why it is risky (one reason per kind, as
        :func:`~chimera.github.trust.chain.patch_risk`). verified: the goal requirements a risky
        step could have targeted that pass, with
            everything they depend on.
        waiting: the goal requirements still red (the work after the approval).
    """

    risk: tuple[str, ...]
    verified: tuple[str, ...]
    waiting: tuple[str, ...]

    def reasons(self) -> list[str]:
        """verify's reason lines for the ``paused`` verdict."""
        return [
            "paused after a risky step: " + "; ".join(self.risk),
            "verified: " + ", ".join(self.verified),
            "waiting for approval: " + ", ".join(self.waiting),
        ]


def _closure(rid: str, defined: Mapping[str, Requirement], goal: set[str]) -> set[str]:
    """The goal requirements ``rid`` depends on, transitively (``rid`` itself excluded)."""
    seen: set[str] = set()
    todo = [d for d in defined[rid].depends_on if d in goal] if rid in defined else []
    while todo:
        dep = todo.pop()
        if dep in seen:
            continue
        seen.add(dep)
        if dep in defined:
            todo += [d for d in defined[dep].depends_on if d in goal]
    return seen


def find_pause(
    *,
    goal: Sequence[str],
    defined: Mapping[str, Requirement],
    after: Mapping[str, str],
    patch: str,
    high_risk_paths: Sequence[str],
) -> Pause | None:
    """The pause a patch legitimately is, or ``None``.

    Call it only for a patch whose every problem is a goal requirement still red (no
    regression, tampering or rejected acceptance): that is the caller's check.

    Args:
        goal: the vetted acceptance requirement ids (red on the base).
        defined: the goal requirements as the base Spec or decide's acceptance block define
            them — never as a spec file the patch adds does.
        after: requirement id → status on the base plus the patch.
        patch: the patch (``git diff --binary`` text), for its deletions and paths.
        high_risk_paths: the base configuration's ``[tool.chimera.run] high_risk_paths``.
    """
    wanted = set(goal)
    try:
        rows = [(c.path, c.status) for c in read_changes(patch)[0]] if patch.strip() else []
    except PatchUnreadable:
        rows = []
    path_risk = patch_risk(rows, high_risk_paths=high_risk_paths)

    def met(rid: str) -> bool:
        needed = {rid, *_closure(rid, defined, wanted)}
        return all(after.get(r) == "passed" for r in needed)

    high = [r for r in goal if r in defined and defined[r].risk is Risk.HIGH and met(r)]
    candidates = list(high)
    if path_risk:
        candidates += [r for r in goal if r not in candidates and met(r)]
    if not candidates:
        return None
    risk = list(path_risk)
    if high:
        risk.append("goal requirements declared risk: high: " + ", ".join(high))
    verified = sorted({d for r in candidates for d in (r, *_closure(r, defined, wanted))})
    waiting = [r for r in goal if after.get(r) != "passed"]
    if not waiting:
        return None  # the goal is met: that is ``passed``, not a pause
    return Pause(tuple(risk), tuple(verified), tuple(waiting))
