"""Scan a patch before it is pushed: the publish job's last line of defence.

(DESIGN.md step 5.) Every changed file becomes a file :class:`~chimera.governance.actions.Action`
evaluated by the :class:`~chimera.governance.kernel.TrustKernel` (so CI/workflow files — never
changed by Chimera — block through the same ``ci-config-write`` rule that guards the agent's
tools, and governance files such as ``action.yml`` or ``CODEOWNERS`` go to review). On top,
rules that only make sense for a finished patch:

* **known secret formats** in added lines block (AWS access keys, GitHub tokens, Slack, Stripe,
  Google API keys, OpenAI/Anthropic keys, PyPI/npm tokens, private-key blocks);
* other **high-entropy** added strings are flagged for review — except in lockfiles and
  integrity hashes (``sha512-…``, ``--hash=sha256:…``, ``"integrity":``), which are
  high-entropy by design;
* **size and binary limits**: a binary file, a file adding more than ``max_file_bytes`` or a
  patch over ``max_patch_bytes`` blocks; paths under ``.git/`` or ``.chimera/`` block.

The patch is parsed with ``unidiff``. Verdicts: ``block`` (rejected, reported, never
pushed), ``review`` (published, listed for the reviewer, never auto-merged), ``allow``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any

from chimera.errors import GitHubError, MissingExtraError
from chimera.governance.actions import Action, ActionKind
from chimera.governance.kernel import TrustKernel
from chimera.governance.rules import Verdict

__all__ = ["Finding", "ScanLimits", "ScanResult", "scan_patch", "shannon_entropy"]

SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("aws-access-key", re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b")),
    ("github-fine-grained-pat", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{50,}\b")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("stripe-live-key", re.compile(r"\b[sr]k_live_[A-Za-z0-9]{20,}\b")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}\b")),
    ("openai-key", re.compile(r"\bsk-(proj-)?[A-Za-z0-9_\-]{32,}\b")),
    ("pypi-token", re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}\b")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    (
        "private-key",
        re.compile(
            r"-----BEGIN (RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY( BLOCK)?-----"
        ),
    ),
)

LOCKFILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "poetry.lock",
        "Pipfile.lock",
        "uv.lock",
        "pdm.lock",
        "Cargo.lock",
        "go.sum",
        "composer.lock",
        "Gemfile.lock",
        "packages.lock.json",
        "flake.lock",
    }
)

_INTEGRITY = re.compile(
    r"(sha(1|256|384|512)-[A-Za-z0-9+/=]{20,}|--hash=sha\d+:[0-9a-f]{32,}|\"integrity\"\s*:"
    r"|sha\d+[:=]\s*[0-9a-f]{32,}|\b[0-9a-f]{40}\b(?=.*\b(commit|rev|sha)\b))",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[A-Za-z0-9+/=_\-]{24,}")


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text`` (0.0 for an empty string)."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _high_entropy(token: str) -> bool:
    if len(token) < 24:
        return False
    # Identifiers and words (snake/kebab case, paths) are low-entropy per character class.
    if re.fullmatch(r"[a-z_\-]+|[A-Z_\-]+|[a-z]+([A-Z][a-z]+)+", token):
        return False
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[+/=_\-]"))
    if re.fullmatch(r"[0-9a-f]+", token):
        return len(token) >= 32 and shannon_entropy(token) > 3.0
    return classes >= 3 and shannon_entropy(token) > 4.0


@dataclass(frozen=True)
class ScanLimits:
    max_patch_bytes: int = 1_000_000
    max_file_bytes: int = 200_000


@dataclass(frozen=True)
class Finding:
    verdict: str
    rule: str
    path: str
    line: int
    reason: str


@dataclass
class ScanResult:
    """Every finding, and the worst verdict (``allow`` when there are none)."""

    findings: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
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

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "files": list(self.files),
            "findings": [asdict(f) for f in self.findings],
        }


def scan_patch(
    patch: str,
    *,
    workspace: str = "/workspace",
    limits: ScanLimits | None = None,
    kernel: TrustKernel | None = None,
) -> ScanResult:
    """Scan a unified diff (``git diff --binary`` output).

    Raises:
        GitHubError: the patch does not parse as a unified diff.
    """
    try:
        from unidiff.errors import UnidiffParseError
        from unidiff.patch import PatchSet
    except ImportError as exc:  # pragma: no cover - the dev install has it
        raise MissingExtraError("patch scanning", "agent") from exc
    lim = limits or ScanLimits()
    kern = kernel or TrustKernel()
    result = ScanResult()
    size = len(patch.encode("utf-8"))
    if size > lim.max_patch_bytes:
        result.findings.append(
            Finding(
                "block",
                "patch-size",
                "",
                0,
                f"the patch is {size} bytes; the limit is {lim.max_patch_bytes}",
            )
        )
    try:
        files = PatchSet(patch)
    except UnidiffParseError as exc:
        raise GitHubError(f"the patch does not parse as a unified diff: {exc}") from exc
    for pf in files:
        path = pf.path
        result.files.append(path)
        parts = PurePosixPath(path).parts
        if parts and parts[0] in (".git", ".chimera"):
            result.findings.append(
                Finding("block", "internal-path", path, 0, f"{parts[0]}/ is never part of a change")
            )
        if pf.is_binary_file:
            result.findings.append(
                Finding(
                    "block", "binary-file", path, 0, "binary files are not published by Chimera"
                )
            )
        kind = (
            ActionKind.DELETE
            if pf.is_removed_file
            else (ActionKind.WRITE if pf.is_added_file else ActionKind.EDIT)
        )
        added = [line for hunk in pf for line in hunk if line.is_added]
        content = "\n".join(line.value.rstrip("\n") for line in added)
        paths = [path] + ([pf.source_file[2:]] if pf.is_rename else [])
        for target in paths:
            decision = kern.evaluate(
                Action.for_path(kind, target, workspace, content=content or None)
            )
            if decision.verdict in (Verdict.BLOCK, Verdict.REVIEW):
                result.findings.append(
                    Finding(
                        decision.verdict.value,
                        ",".join(decision.rule_ids) or "kernel",
                        target,
                        0,
                        "; ".join(decision.reasons),
                    )
                )
        added_bytes = len(content.encode("utf-8"))
        if added_bytes > lim.max_file_bytes:
            result.findings.append(
                Finding(
                    "block",
                    "file-size",
                    path,
                    0,
                    f"adds {added_bytes} bytes; the limit per file is {lim.max_file_bytes}",
                )
            )
        lockfile = PurePosixPath(path).name in LOCKFILES
        for line in added:
            text = line.value
            lineno = int(line.target_line_no or 0)
            for rule, pattern in SECRET_PATTERNS:
                if pattern.search(text):
                    result.findings.append(
                        Finding(
                            "block",
                            f"secret:{rule}",
                            path,
                            lineno,
                            f"a {rule} secret format in an added line",
                        )
                    )
                    break
            else:
                if lockfile or _INTEGRITY.search(text):
                    continue
                for token in _TOKEN.findall(text):
                    if _high_entropy(token):
                        result.findings.append(
                            Finding(
                                "review",
                                "high-entropy",
                                path,
                                lineno,
                                f"a high-entropy string ({len(token)} chars, "
                                f"{shannon_entropy(token):.1f} bits/char) may be a secret",
                            )
                        )
                        break
    return result
