"""check_drift: the single function behind every surface that asks "does the Spec hold?".

The pytest plugin, ``chimera check``, the AutonomousAgent's verifier and the orchestrator
all call :func:`check_drift` (or a :class:`DriftSession` when they evaluate requirements one
at a time, as pytest items do).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from chimera.runner import CommandRunner
from chimera.spec.model import Spec
from chimera.spec.results import DriftReport


def check_drift(
    spec: Spec,
    root: Path,
    *,
    runner: CommandRunner | None = None,
    only: Iterable[str] | None = None,
) -> DriftReport:
    """Evaluate every requirement of ``spec`` against the tree at ``root``.

    Args:
        spec: a validated Spec (see :func:`chimera.spec.loader.load_spec`).
        root: the repository root; paths in the Spec are relative to it.
        runner: runs ``command`` checks; default :class:`chimera.runner.LocalRunner`.
        only: evaluate just these ids (others are not reported).

    Returns:
        A DriftReport with one result per requirement, in spec order. Never raises for a
        requirement that cannot be evaluated: that requirement's status is ``error``.
    """
    raise NotImplementedError
