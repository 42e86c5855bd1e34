"""ExperienceBuffer: every attempt of every run, kept as JSONL, retrievable for later tasks.

Each attempt — passed or failed — is one line: the task, the failure signature, the verdict,
diff stats, tokens, cost and model. Failures are kept on purpose: they are the negative
examples a later task can be warned with ("this approach was tried on a similar task and
failed this way"). Retrieval is by token overlap (Jaccard over lower-cased word tokens), which
needs no model and no index; the buffer is small per project. (The idea of an experience
replay of trajectories with failures as negatives follows Reflexion, Shinn et al. 2023, and
ExpeL, Zhao et al. 2024.)

Writes are append-only: one ``write`` per line on a file opened with ``O_APPEND``, fsync'd,
under a file lock, so concurrent runs never interleave lines. A damaged line (a torn write
from a crash) is skipped on read, not fatal.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

from chimera.errors import ChimeraError
from chimera.localstate import make_dirs
from chimera.protocols import Experience

_TOKEN_RE = re.compile(r"[a-z0-9_]{2,}")
_STOP = frozenset(
    {
        *("the", "and", "for", "with", "that", "this", "from", "into", "when", "then"),
        *("than", "have", "has", "are", "was", "were", "not", "but", "its", "you"),
        *("your", "our", "all", "any", "can", "will", "should", "must", "make", "sure"),
        *("add", "use"),
    }
)


def tokens(text: str) -> frozenset[str]:
    """Lower-cased word tokens of ``text`` (2+ characters, common stop words removed)."""
    return frozenset(t for t in _TOKEN_RE.findall(text.lower()) if t not in _STOP)


class ExperienceBuffer:
    """Append-only JSONL store of attempts with token-overlap retrieval.

    Args:
        path: the ``.jsonl`` file (created with its folder on first append).
        workspace: the repository whose dotenv values are redacted too (``None``: only
            credential-named environment variables and known token formats).

    Raises:
        ChimeraError: the file cannot be written (on :meth:`append`).
    """

    def __init__(self, path: Path, *, workspace: Path | None = None) -> None:
        from filelock import FileLock

        self.path = Path(path)
        self.workspace = workspace
        self._lock = threading.Lock()
        self._file_lock = FileLock(str(self.path) + ".lock")

    def append(self, experience: Experience) -> None:
        """Write one line (a single ``write`` on an ``O_APPEND`` file, fsync'd), its strings
        passed through the governance SecretRedactor (the task may quote a credential, and the
        buffer outlives the run)."""
        from chimera.governance.redactor import SecretRedactor

        redactor = SecretRedactor.from_environment(workspace=self.workspace)
        row, _ = redactor.redact_json(experience.to_json())
        line = json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"
        data = line.encode("utf-8")
        try:
            make_dirs(self.path.parent)
            with self._lock, self._file_lock:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, data)
                    os.fsync(fd)
                finally:
                    os.close(fd)
        except OSError as exc:
            raise ChimeraError(f"{self.path}: cannot append an experience: {exc}") from exc

    def __iter__(self) -> Iterator[Experience]:
        try:
            raw = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ChimeraError(f"{self.path}: cannot read: {exc}") from exc
        for line in raw.splitlines():
            try:
                data = json.loads(line)
                yield Experience.from_json(data)
            except (ValueError, TypeError, KeyError):
                continue  # a torn line from a crash: skipped, never fatal

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def failures(self) -> list[Experience]:
        """Every failed attempt (the negative examples), oldest first."""
        return [e for e in self if e.failed]

    def similar(
        self, task: str, k: int = 5, *, failures_only: bool = False, min_score: float = 0.1
    ) -> list[tuple[float, Experience]]:
        """The ``k`` stored attempts whose task overlaps ``task`` most, best first.

        The score is the Jaccard overlap of word tokens (0..1); entries under ``min_score``
        are left out. Identical (task, verdict, signature) entries count once.
        """
        query = tokens(task)
        if not query or k <= 0:
            return []
        best: dict[tuple[str, str, str], tuple[float, Experience]] = {}
        for exp in self:
            if failures_only and not exp.failed:
                continue
            have = tokens(exp.task)
            if not have:
                continue
            score = len(query & have) / len(query | have)
            if score < min_score:
                continue
            key = (exp.task, exp.verdict, exp.signature)
            if key not in best or best[key][0] < score:
                best[key] = (score, exp)
        ranked = sorted(best.values(), key=lambda se: (-se[0], se[1].ts))
        return ranked[:k]


__all__ = ["Experience", "ExperienceBuffer", "tokens"]
