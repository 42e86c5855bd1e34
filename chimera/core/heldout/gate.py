"""HeldOutGate: the local acceptance of held-out requirements, one per session.

The session factory builds it when ``[tool.chimera.heldout]`` names a folder; the
AutonomousAgent asks it after an attempt's visible checks pass, the ProjectOrchestrator again
before it accepts a card. Each verdict's private record (ids, statuses, evidence) is appended
to ``<run_dir>/heldout.jsonl`` — under ``.chimera/runs``, which the sandbox masks whole while
held-out requirements are configured — and the audit log gets the public part only (verdict
and digest). The agent learns :data:`~chimera.core.heldout.verdict.PUBLIC_MESSAGE`, nothing
more.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.core.heldout.evaluate import check_heldout
from chimera.core.heldout.place import HeldOutDir
from chimera.core.heldout.verdict import HeldOutVerdict
from chimera.localstate import make_dirs
from chimera.runner import CommandRunner
from chimera.spec.model import Spec

if TYPE_CHECKING:
    from chimera.governance.audit import AuditLog
    from chimera.spec.engine.options import EngineOptions

RECORD_FILE = "heldout.jsonl"


class HeldOutGate:
    """Checks held-out requirements against the live tree (see the module docstring).

    Args:
        place: the validated held-out folder (its ``root`` is the workspace).
        runner: the session's sandbox; held-out commands run in disposable copies through it.
        run_dir: the run's folder (the private record goes to ``heldout.jsonl`` there).
        audit: the run's audit log (public part of each verdict).
        options: the engine's limits.
    """

    def __init__(
        self,
        place: HeldOutDir,
        runner: CommandRunner,
        *,
        run_dir: Path,
        audit: AuditLog | None = None,
        options: EngineOptions | None = None,
    ) -> None:
        self.place = place
        self.runner = runner
        self.run_dir = Path(run_dir)
        self.audit = audit
        self.options = options
        self.verdicts: list[tuple[str, HeldOutVerdict]] = []

    @property
    def hidden(self) -> tuple[Path, ...]:
        """The paths every agent-facing part must hide: the held-out folder."""
        return (self.place.path,)

    @property
    def record_path(self) -> Path:
        return self.run_dir / RECORD_FILE

    def check(self, visible: Spec, passed: Collection[str], *, label: str) -> HeldOutVerdict:
        """Held-out requirements on the tree as it is now.

        ``visible``: the Spec the change passed; ``passed``: its ids passing now (a held-out
        requirement applies once the visible ones it depends on pass); ``label``: who asked
        (an attempt, a card), kept in the private record.
        """
        verdict = check_heldout(
            visible, self.place, self.runner, passed=passed, options=self.options
        )
        self.verdicts.append((label, verdict))
        line = json.dumps({"label": label, **verdict.private()}, ensure_ascii=False) + "\n"
        make_dirs(self.run_dir)
        fd = os.open(self.record_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
        if self.audit is not None:
            public = verdict.public()
            self.audit.append(
                "heldout_check", label=label, verdict=public["verdict"], digest=public["digest"]
            )
        return verdict

    def latest_lines(self) -> list[str]:
        """The latest verdict's failures, one line each (empty when it passed or none ran):
        for the maintainer's run summary only, never a prompt."""
        if not self.verdicts:
            return []
        label, verdict = self.verdicts[-1]
        return [f"{label}: {text}" for text in verdict.maintainer_lines()]
