"""The Spine: ownership-scoped context for an attempt, within a token budget.

What the agent sees first is what the Spec says is relevant, not the whole repository: the
target requirements (with their current status and evidence), the files their evidence
names, the file their check targets, and the files matched by their ``owner`` globs — in that
priority order, until the budget is spent. A file that does not fit whole is cut with a marker
saying how many lines were left out; files that do not fit at all are listed by name, so the
agent knows to ``read_file`` them. (The idea of scoping context by ownership follows
CODEOWNERS-style path ownership; the budgeted, priority-ordered packing follows Aider's repo
map.)
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pathspec

from chimera.core.attempts import approx_tokens
from chimera.spec.engine.tree import normalize_glob
from chimera.spec.model import Requirement, Spec
from chimera.spec.results import DriftReport

_SKIP_PARTS = {".git", ".chimera"}
_MAX_FILE_BYTES = 512 * 1024
_MAX_LISTED = 40
"""Files listed by name past the budget; the rest are counted."""
_MIN_PARTIAL_TOKENS = 120
"""Below this many tokens left, a file is listed instead of shown in part."""


@dataclass(frozen=True)
class SpineFile:
    """One file of the context: its text as shown and whether it was cut."""

    path: str
    reason: str
    text: str
    total_lines: int
    shown_lines: int

    @property
    def truncated(self) -> bool:
        return self.shown_lines < self.total_lines


@dataclass(frozen=True)
class SpineContext:
    """The rendered context and what went into it.

    Attributes:
        text: the Markdown block for the prompt.
        tokens: its size as counted by the counter given to :meth:`Spine.build`.
        files: files shown (whole or cut).
        omitted: files in scope that did not fit, by path.
    """

    text: str
    tokens: int
    files: tuple[SpineFile, ...] = ()
    omitted: tuple[str, ...] = field(default_factory=tuple)


def list_files(root: Path) -> list[str]:
    """Files of the tree as POSIX paths relative to ``root``.

    In a git repository: what git sees (tracked plus untracked-not-ignored); otherwise a walk
    that skips ``.git/`` and ``.chimera/``.
    """
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        proc = None
    if proc is not None and proc.returncode == 0:
        names = [n for n in proc.stdout.decode("utf-8", "replace").split("\0") if n]
        return sorted({n for n in names if not (_SKIP_PARTS & set(PurePosixPath(n).parts))})
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_PARTS)
        rel = Path(dirpath).relative_to(root)
        out.extend((rel / f).as_posix() for f in sorted(filenames))
    return out


def _read_text(root: Path, rel: str) -> str | None:
    path = root / rel
    try:
        resolved = path.resolve()
        if not resolved.is_relative_to(root.resolve()) or not resolved.is_file():
            return None
        if resolved.stat().st_size > _MAX_FILE_BYTES:
            return None
        data = resolved.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _check_paths(req: Requirement) -> list[str]:
    """The single file a check targets, where its kind names one (``path:`` field)."""
    value = getattr(req.check, "path", None)
    return [str(value)] if isinstance(value, str | os.PathLike) else []


class Spine:
    """Builds the ownership-scoped context of an attempt.

    Args:
        root: the workspace root.
        token_budget: the most tokens the rendered context may use (requirements included).
        count_tokens: token counter for a string; defaults to a 4-characters-per-token estimate.
    """

    def __init__(
        self,
        root: Path,
        *,
        token_budget: int = 8000,
        count_tokens: Callable[[str], int] = approx_tokens,
        hidden: Sequence[Path] = (),
    ) -> None:
        self.root = root
        self.token_budget = token_budget
        self.count_tokens = count_tokens
        # Held-out requirements: never in a prompt, whatever a visible check or glob names.
        self.hidden = tuple(Path(h).resolve() for h in hidden)

    def _hidden(self, rel: str) -> bool:
        if not self.hidden:
            return False
        real = (self.root / rel).resolve()
        return any(real == h or real.is_relative_to(h) for h in self.hidden)

    def scope(
        self, spec: Spec, report: DriftReport | None, targets: Sequence[str]
    ) -> list[tuple[str, str]]:
        """``(path, reason)`` pairs in priority order: evidence, check target, owner globs."""
        reqs = spec.by_id()
        results = report.by_id() if report is not None else {}
        ordered: dict[str, str] = {}

        def add(paths: Iterable[str], reason: str) -> None:
            for p in paths:
                norm = PurePosixPath(p.replace("\\", "/")).as_posix().lstrip("./") or p
                if norm in ordered or _SKIP_PARTS & set(PurePosixPath(norm).parts):
                    continue
                if not self._hidden(norm):
                    ordered[norm] = reason

        for tid in targets:
            res = results.get(tid)
            if res is not None:
                add((e.file for e in res.evidence if e.file), f"evidence of {tid}")
        for tid in targets:
            if tid in reqs:
                add(_check_paths(reqs[tid]), f"checked by {tid}")
        globs = [(tid, g) for tid in targets if tid in reqs for g in reqs[tid].owner]
        if globs:
            files = list_files(self.root)
            for tid, glob in globs:
                # The engine's spelling rules, so ``./x`` owns the root's x as a check selects it.
                matcher = pathspec.GitIgnoreSpec.from_lines([normalize_glob(glob)])
                add((f for f in files if matcher.match_file(f)), f"owned by {tid} ({glob})")
        return list(ordered.items())

    def build(self, spec: Spec, report: DriftReport | None, targets: Sequence[str]) -> SpineContext:
        """Render the target requirements and the files in scope within the budget."""
        reqs = spec.by_id()
        results = report.by_id() if report is not None else {}
        head = ["## Target requirements (the Spec decides when the task is done)"]
        for tid in targets:
            req = reqs.get(tid)
            if req is None:
                continue
            title = f" — {req.title}" if req.title else ""
            head.append(f"- `{tid}`{title} [{req.check.describe()}, risk {req.risk.value}]")
            res = results.get(tid)
            if res is not None:
                status = res.status.value
                body = res.render(max_evidence=5) if res.status.red else res.message
                head.append(f"  now {status}: " + body.replace("\n", "\n  "))
        text = "\n".join(head)
        used = self.count_tokens(text)
        shown: list[SpineFile] = []
        omitted: list[str] = []
        blocks: list[str] = []
        spent = False
        for rel, reason in self.scope(spec, report, targets):
            content = _read_text(self.root, rel)
            if content is None:
                continue
            if spent:
                omitted.append(rel)
                continue
            lines = content.splitlines()
            block = _file_block(rel, reason, lines, len(lines))
            cost = self.count_tokens(block)
            if used + cost <= self.token_budget:
                blocks.append(block)
                shown.append(SpineFile(rel, reason, content, len(lines), len(lines)))
                used += cost
                continue
            # The budget is spent: this file is shown cut (if a useful part fits) and every
            # later one is listed by name instead.
            spent = True
            keep = 0
            if self.token_budget - used >= _MIN_PARTIAL_TOKENS:
                keep = self._fit_lines(rel, reason, lines, self.token_budget - used)
            if keep == 0:
                omitted.append(rel)
                continue
            block = _file_block(rel, reason, lines[:keep], len(lines))
            blocks.append(block)
            shown.append(SpineFile(rel, reason, "\n".join(lines[:keep]), len(lines), keep))
            used += self.count_tokens(block)
        parts = [text]
        if blocks:
            parts.append("## Files in scope (owner globs and evidence)")
            parts.extend(blocks)
        if omitted:
            listed = "\n".join(f"- {o}" for o in omitted[:_MAX_LISTED])
            if len(omitted) > _MAX_LISTED:
                listed += f"\n- ... and {len(omitted) - _MAX_LISTED} more"
            parts.append(
                "## In scope but not shown (context budget spent; read them with read_file)\n"
                + listed
            )
        rendered = "\n\n".join(parts)
        return SpineContext(rendered, self.count_tokens(rendered), tuple(shown), tuple(omitted))

    def _fit_lines(self, rel: str, reason: str, lines: list[str], room: int) -> int:
        """The most leading lines whose block fits in ``room`` tokens (binary search)."""
        lo, hi = 0, len(lines)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.count_tokens(_file_block(rel, reason, lines[:mid], len(lines))) <= room:
                lo = mid
            else:
                hi = mid - 1
        return lo


def _file_block(rel: str, reason: str, lines: list[str], total: int) -> str:
    body = "\n".join(lines)
    fence = "````" if "```" in body else "```"
    marker = ""
    if len(lines) < total:
        marker = (
            f"\n[... truncated: {total - len(lines)} more lines of {rel} not shown; "
            "read them with read_file ...]"
        )
    return f"### {rel} ({reason}, {total} lines)\n{fence}\n{body}\n{fence}{marker}"


__all__ = ["Spine", "SpineContext", "SpineFile", "list_files"]
