"""``command``: a shell command exits 0."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from chimera.errors import RunnerError
from chimera.spec.kinds._fields import RelPath
from chimera.spec.model import Check, CheckOutcome, Evidence, Status

if TYPE_CHECKING:
    from chimera.spec.context import CheckContext


class Command(Check):
    """``run`` exits 0 within ``timeout`` seconds, in the root or in ``cwd`` under it.

    The command runs through the runner given to ``check_drift`` (the local one in CI, the
    sandbox during an autonomous run). Failure evidence is the exit code and output tail.
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
        return f"command `{self.run}`{where}"

    def check(self, ctx: CheckContext) -> CheckOutcome:
        cwd, problem = ctx.resolve_cwd(self.cwd)
        if cwd is None:
            return CheckOutcome(Status.ERROR, problem or f"bad cwd {self.cwd!r}")
        try:
            result = ctx.runner.run(self.run, cwd=cwd, timeout=self.timeout)
        except RunnerError as exc:
            return CheckOutcome(Status.ERROR, str(exc))
        tail = result.tail()
        where = f" in {self.cwd}" if self.cwd else ""
        if result.timed_out:
            return CheckOutcome(
                Status.FAILED,
                f"`{self.run}`{where} timed out after {self.timeout:g}s",
                (Evidence(snippet=tail, note=f"timed out after {self.timeout:g}s"),),
            )
        code = result.exit_code
        if code == 0:
            return CheckOutcome(
                Status.PASSED,
                f"`{self.run}`{where} exited 0 in {result.duration_s:.1f}s",
                (Evidence(snippet=tail, note="exit 0"),),
            )
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit {code}"
        return CheckOutcome(
            Status.FAILED,
            f"`{self.run}`{where} failed: {how}",
            (Evidence(snippet=tail, note=how),),
        )
