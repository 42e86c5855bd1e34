"""``command``: a shell command exits 0."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from chimera.spec.kinds._fields import RelPath
from chimera.spec.model import Check, CheckOutcome

if TYPE_CHECKING:
    from chimera.spec.context import CheckContext


class Command(Check):
    """``run`` exits 0 within ``timeout`` seconds, in the root or in ``cwd`` under it.

    The command runs through the runner given to ``check_drift`` (the local one in CI, the
    sandbox during an autonomous run). Failure evidence is the exit code and output tail.
    """

    kind_name: ClassVar[str] = "command"

    run: str = Field(min_length=1)
    timeout: float = Field(default=300.0, gt=0, le=24 * 3600)
    cwd: RelPath | None = None

    def describe(self) -> str:
        where = f" (in {self.cwd})" if self.cwd else ""
        return f"command `{self.run}`{where}"

    def check(self, ctx: CheckContext) -> CheckOutcome:
        raise NotImplementedError
