"""Held-out requirements: checks the agent never sees, so reward hacking is caught.

A maintainer keeps spec files in a folder named by ``[tool.chimera.heldout] dir``. The
session factory then masks it in the sandbox (with ``.chimera/runs``, where its verdicts are
recorded), hides it from the tools, the Spine, the snapshots and the visible checks, and
builds one :class:`HeldOutGate` that acceptance alone asks: the AutonomousAgent after an
attempt's visible checks pass, the ProjectOrchestrator before it accepts a card. A failure
is reported to the agent as :data:`PUBLIC_MESSAGE` and nothing more.

Public API: :func:`locate_heldout`, :class:`HeldOutDir`, :class:`HeldOutGate`,
:func:`check_heldout`, :func:`evaluate_heldout` (the verify side), :class:`HeldOutVerdict`,
:data:`PUBLIC_MESSAGE`, :data:`HELD_OUTCOME`, :func:`verify_digest`, :class:`Suspicion`,
:func:`checked_paths`, :func:`edited_checks`; sealing in :mod:`chimera.core.heldout.seal`.
"""

from chimera.core.heldout.evaluate import check_heldout, evaluate_heldout, heldout_runner
from chimera.core.heldout.gate import HeldOutGate
from chimera.core.heldout.place import HeldOutDir, locate_heldout, refuse_overlap
from chimera.core.heldout.suspicion import Suspicion, checked_paths, edited_checks
from chimera.core.heldout.verdict import (
    HELD_OUTCOME,
    PUBLIC_MESSAGE,
    HeldOutResult,
    HeldOutVerdict,
    verify_digest,
)

__all__ = [
    "HELD_OUTCOME",
    "PUBLIC_MESSAGE",
    "HeldOutDir",
    "HeldOutGate",
    "HeldOutResult",
    "HeldOutVerdict",
    "Suspicion",
    "check_heldout",
    "checked_paths",
    "edited_checks",
    "evaluate_heldout",
    "heldout_runner",
    "locate_heldout",
    "refuse_overlap",
    "verify_digest",
]
