"""The scan's result types: a :class:`Finding` per rule hit, a :class:`ScanResult` per patch.

A finding names the rule, the path and the verdict; its ``reason`` repeats the verdict and the
rule id so that every renderer that shows ``path — reason`` (the outcome comment, the PR body)
says which rule held or blocked what. No finding ever carries a secret value: secret rules
describe the format (``a GitHub token``) and the encoding, never the match.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from chimera.governance.rules import Verdict

__all__ = ["Finding", "ScanLimits", "ScanResult", "finding"]


@dataclass(frozen=True)
class ScanLimits:
    """Size limits, in bytes: the whole patch, and what one file may add."""

    max_patch_bytes: int = 1_000_000
    max_file_bytes: int = 200_000


@dataclass(frozen=True)
class Finding:
    """One rule hit.

    Attributes:
        verdict: ``"block"`` (never pushed) or ``"review"`` (pushed, held for a person).
        rule: the scan rule id (kebab-case; ``code:<id>`` for a governance rule over code).
        path: the repository-relative path as git applies it (``""`` for the whole patch,
            ``"<commit message>"`` / ``"<PR title>"`` for messages).
        line: the 1-based line in the new file, or 0 when the finding is about the file.
        reason: ``"<verdict> (rule <id>): <why>"`` — never the secret itself.
    """

    verdict: str
    rule: str
    path: str
    line: int
    reason: str


def finding(verdict: Verdict, rule: str, path: str, why: str, line: int = 0) -> Finding:
    """A :class:`Finding` whose reason states the verdict and the rule."""
    return Finding(verdict.value, rule, path, line, f"{verdict.value} (rule {rule}): {why}")


@dataclass
class ScanResult:
    """Every finding, the changed paths (as git applies them), and the worst verdict.

    Attributes:
        findings: rule hits in scan order, one per (verdict, rule, path, line).
        files: every path the patch touches (new paths; old paths of renames too).
        rescanned: whether the tree after ``git apply`` (in a temporary index) was re-scanned.
    """

    findings: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    rescanned: bool = False
    _seen: set[tuple[str, str, str, int]] = field(
        default_factory=set, init=False, repr=False, compare=False
    )

    @property
    def verdict(self) -> str:
        """``"block"``, ``"review"`` or ``"allow"`` (no findings)."""
        return (
            Verdict.worst(Verdict(f.verdict) for f in self.findings).value
            if self.findings
            else "allow"
        )

    @property
    def blocked(self) -> list[Finding]:
        return [f for f in self.findings if f.verdict == "block"]

    @property
    def flagged(self) -> list[Finding]:
        return [f for f in self.findings if f.verdict == "review"]

    def add(self, new: Finding) -> None:
        """Record ``new`` unless the same rule already said the same about the same line."""
        key = (new.verdict, new.rule, new.path, new.line)
        if key not in self._seen:
            self._seen.add(key)
            self.findings.append(new)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "files": list(self.files),
            "rescanned": self.rescanned,
            "findings": [asdict(f) for f in self.findings],
        }
