"""The shapes of ``chimera doctor``'s verdicts (:mod:`chimera.github.doctor.checks`): one
:class:`Finding` per check, the :class:`DoctorReport`, the options, and the context every
check reads the repository through.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from chimera.github.doctor.caller import CallerScan

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient

__all__ = [
    "APP_PERMISSIONS",
    "DEFAULT_SECRETS",
    "DEFAULT_SPEC_CHECKS",
    "DoctorContext",
    "DoctorOptions",
    "DoctorReport",
    "Finding",
    "Mark",
    "short",
]

# What the App's installation must grant: the permission-* inputs of the workflows'
# create-github-app-token steps (start CI, the drain's cancels, the store branches' commits).
APP_PERMISSIONS: dict[str, str] = {
    "contents": "write",
    "issues": "write",
    "pull_requests": "write",
    "actions": "write",
}
# The App's secrets as the documentation names them: what a caller passing
# `secrets: inherit` (or no caller yet) needs.
DEFAULT_SECRETS = ("CHIMERA_APP_ID", "CHIMERA_APP_PRIVATE_KEY")
# The names a required status check of the Spec may have: the check-only workflow's job
# (``spec``; ``<caller job> / spec`` through a reusable workflow) or Chimera's own check run.
DEFAULT_SPEC_CHECKS = ("spec", "chimera spec")


class Mark(StrEnum):
    """A finding's verdict."""

    OK = "ok"
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Finding:
    """One check's verdict: ``name`` (``caller``, ``labels`` ...), ``mark``, one line saying
    what was found, and the fix (``""`` when nothing is to be done)."""

    name: str
    mark: Mark
    message: str
    fix: str = ""

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "status": self.mark.value, "message": self.message,
                "fix": self.fix}  # fmt: skip


@dataclass(frozen=True)
class DoctorOptions:
    """What ``chimera doctor`` was asked.

    Attributes:
        label: the trigger label (the caller's ``label`` input).
        spec_checks: the names the Spec's required status check may have (case-insensitive;
            ``<job> / <name>`` matches too).
        app: the App's slug (``""``: any installation with the permissions).
        sources: the ``owner/name`` repositories that are Chimera (``()``: any named
            ``chimera``).
        fix: create the missing labels before checking them.
    """

    label: str = "chimera"
    spec_checks: tuple[str, ...] = DEFAULT_SPEC_CHECKS
    app: str = ""
    sources: tuple[str, ...] = ()
    fix: bool = False


@dataclass(frozen=True)
class DoctorReport:
    """Every finding, in check order, and what ``--fix`` changed."""

    repository: str
    default_branch: str
    findings: tuple[Finding, ...]
    fixed: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No finding failed (``unknown`` ones do not fail)."""
        return all(f.mark is not Mark.FAIL for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "repository": self.repository,
            "default_branch": self.default_branch,
            "ok": self.ok,
            "checks": [f.to_json() for f in self.findings],
            "fixed": list(self.fixed),
        }


@dataclass
class DoctorContext:
    """What every check reads through: the client, the options, the repository's JSON, the
    caller scans (the ``caller`` check fills them) and what ``--fix`` changed."""

    client: GitHubClient
    options: DoctorOptions
    repo: dict[str, Any]
    scans: list[CallerScan] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.client.repository

    @property
    def branch(self) -> str:
        return str(self.repo.get("default_branch") or "main")

    def get(self, what: str, url: str) -> Any:
        return self.client._call(what, lambda: self.client._raw("GET", url))


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def short(text: str, limit: int = 80) -> str:
    """``text`` on one line without control characters (a terminal escape in a file or label
    name is data, never an instruction to the terminal), cut to ``limit`` characters with an
    ellipsis."""
    printable = "".join(c if c.isprintable() else " " for c in str(text))
    flat = " ".join(printable.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
