"""``command``: a shell command exits 0."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from chimera.errors import RunnerError
from chimera.spec.kinds.fields import RelPath
from chimera.spec.model import Check, CheckOutcome, Evidence, Status, cap_lines, one_line

if TYPE_CHECKING:
    from chimera.runner import CommandResult
    from chimera.spec.check_context import CheckContext


TAIL_LINES = 40
TAIL_CHARS = 2000
"""The output tail kept as evidence: its last lines, and at most this many characters."""


def _evidence_tail(result: CommandResult) -> str:
    # Lines are cut before the tail is measured, so a marker counts the characters of the
    # whole line, not just of the part that happened to fall in the tail.
    text = cap_lines(result.tail(max_chars=sys.maxsize, max_lines=TAIL_LINES))
    return text if len(text) <= TAIL_CHARS else "…" + text[-(TAIL_CHARS - 1) :]


class Command(Check):
    """``run`` exits 0 within ``timeout`` seconds, in the root or in ``cwd`` under it.

    The command runs through the runner given to ``check_drift`` (the local one in CI, the
    sandbox during an autonomous run). Evidence is the exit code and the output's tail, each
    line cut to :data:`~chimera.spec.model.EVIDENCE_LINE_CHARS` characters with a marker (a
    command printing megabytes on one line must not make a megabyte report).
    """

    kind_name: ClassVar[str] = "command"

    run: str = Field(min_length=1, description="Shell command; exit status 0 passes.")
    timeout: float = Field(
        default=300.0, gt=0, le=24 * 3600, description="Seconds before the command is killed."
    )
    cwd: RelPath | None = Field(
        default=None, description="Directory to run in, relative to the root (default: root)."
    )

    def describe(self) -> str:
        where = f" (in {self.cwd})" if self.cwd else ""
        return f"command `{one_line(self.run)}`{where}"

    def check(self, ctx: CheckContext) -> CheckOutcome:
        cwd, problem = ctx.resolve_cwd(self.cwd)
        if cwd is None:
            return CheckOutcome(Status.ERROR, problem or f"bad cwd {self.cwd!r}")
        try:
            result = ctx.runner.run(self.run, cwd=cwd, timeout=self.timeout)
        except RunnerError as exc:
            return CheckOutcome(Status.ERROR, str(exc))
        tail = _evidence_tail(result)
        run = one_line(self.run)
        where = f" in {self.cwd}" if self.cwd else ""
        if result.timed_out:
            return CheckOutcome(
                Status.FAILED,
                f"`{run}`{where} timed out after {self.timeout:g}s",
                (Evidence(snippet=tail, note=f"timed out after {self.timeout:g}s"),),
            )
        code = result.exit_code
        if code == 0:
            return CheckOutcome(
                Status.PASSED,
                f"`{run}`{where} exited 0 in {result.duration_s:.1f}s",
                (Evidence(snippet=tail, note="exit 0"),),
            )
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit {code}"
        return CheckOutcome(
            Status.FAILED,
            f"`{run}`{where} failed: {how}",
            (Evidence(snippet=tail, note=how),),
        )
