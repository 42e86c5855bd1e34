"""The audit log: append-only JSONL, one hash-chained event per line.

Every decision of a run (model calls, tool calls, sandbox verdicts, attempts, check results,
budget refusals) is one line::

    {"event": "...", "fields": {...}, "hash": "<sha256>", "prev_hash": "<sha256>",
     "run_id": "...", "seq": 7, "ts": "2026-01-01T12:00:00.000000+00:00"}

``hash`` is the SHA-256 of the line's canonical JSON (sorted keys, no spaces, UTF-8) without
the ``hash`` key; ``prev_hash`` is the previous line's ``hash`` (64 zeros for the first), so
editing, deleting or reordering a line breaks the chain at that line (the construction of
tamper-evident logs such as Certificate Transparency, Crosby & Wallach 2009, in its plain
linear form). Truncating the tail keeps a valid chain, which is why the head hash is also
recorded elsewhere (run state, job summary, PR body) and passed to :func:`verify_audit_log`.

Each line is written with a single ``write`` on an ``O_APPEND`` descriptor before ``append``
returns, so it is in the file (the kernel's page cache) before the caller's next step: a
``kill -9`` of the writer loses nothing, since the page cache outlives the process. What a
power cut could lose is bounded instead of paid per line: the file is ``fsync``'d at the
points that matter — events in :data:`DURABLE_EVENTS` (a run's state transitions: start,
attempts, reverts, stops, the end, approvals), an explicit :meth:`AuditLog.sync` (before a
publish), and at interpreter exit for every log with unsynced lines. An ``fsync`` per line
cost about 20 ms on a busy disk; an append now costs well under a millisecond.

A thread lock and a file lock (``<path>.lock``, the ``filelock`` package) serialise writers
in one process and across processes; the sequence number and chain continue from what is on
disk, so a reopened log (a resumed run) extends the same chain.

A writer killed in the middle of an append (``kill -9`` can cut a ``write`` of more than a
page short) leaves an unterminated fragment after the last newline. Every complete append ends
in a newline and appends happen under the file lock, so a fragment found while holding that
lock can only be such a torn append: opening the log cuts it off and records the cut as a
``torn_tail_discarded`` event (size, SHA-256 and the start of the fragment), so the chain
continues from the last complete line and the loss stays visible in it. Anything else that
is not a valid event (a complete line that does not parse) still refuses to be extended.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.errors import AuditError
from chimera.governance.audit_chain import (
    GENESIS_HASH,
    AuditVerification,
    canonical_json,
    entry_hash,
    jsonable,
    verify_audit_log,
)
from chimera.localstate import make_dirs

if TYPE_CHECKING:
    from chimera.governance.redactor import SecretRedactor

__all__ = ["GENESIS_HASH", "AuditLog", "AuditVerification", "canonical_json", "verify_audit_log"]


DURABLE_EVENTS = frozenset(
    {
        "run_started",
        "run_finished",
        "run_stopped",
        "resumed",
        "attempt_started",
        "attempt",
        "revert",
        "budget_stop",
        "card_started",
        "card_finished",
        "approved",
        "acceptance_written",
        "spec_tampering",
        "torn_tail_discarded",
    }
)
"""Events after which the log is ``fsync``'d: a run's state transitions."""

_UNSYNCED: set[AuditLog] = set()
_UNSYNCED_LOCK = threading.Lock()


def _sync_all_at_exit() -> None:
    with _UNSYNCED_LOCK:
        logs = list(_UNSYNCED)
    for log in logs:
        with contextlib.suppress(Exception):
            log.sync()


atexit.register(_sync_all_at_exit)


def _last_line(path: Path) -> bytes | None:
    """The last non-empty line of ``path`` (read backwards in blocks), or ``None``."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return None
    with handle:
        end = handle.seek(0, os.SEEK_END)
        block = 8192
        data = b""
        pos = end
        while pos > 0:
            step = min(block, pos)
            pos -= step
            handle.seek(pos)
            data = handle.read(step) + data
            stripped = data.rstrip(b"\n")
            if b"\n" in stripped:
                return stripped.rsplit(b"\n", 1)[1]
        stripped = data.rstrip(b"\n")
        return stripped or None


class AuditLog:
    """An append-only, hash-chained JSONL event log.

    Args:
        path: the ``.jsonl`` file (created with its parent folders if missing).
        run_id: written into every line this instance appends.
        redactor: when given, every event's fields pass it before they are hashed and
            written (a run's log is uploaded as an artifact: a credential a model, a task or
            a tool wrote into a field is replaced by ``[REDACTED:<name>]``).

    Raises:
        AuditError: the file cannot be written, or its last line is not a valid event (a log
            that does not end in a valid event cannot be extended without hiding damage).
    """

    def __init__(self, path: Path, run_id: str, *, redactor: SecretRedactor | None = None) -> None:
        from filelock import FileLock

        self.path = Path(path)
        self.run_id = run_id
        self.redactor = redactor
        self._thread_lock = threading.Lock()
        try:
            make_dirs(self.path.parent)
        except OSError as exc:
            raise AuditError(f"{self.path}: cannot create the folder: {exc}") from exc
        self._file_lock = FileLock(str(self.path) + ".lock")
        # The head after this instance's last append, with the file size it left: when the
        # size is unchanged under the lock, no other writer appended and the head is known.
        self._head: tuple[int, int, str] | None = None
        self._unsynced = False
        with self._locked():
            torn = self._cut_torn_tail()
            self._read_head()
        if torn is not None:
            self.append("torn_tail_discarded", **torn)

    def _cut_torn_tail(self) -> dict[str, Any] | None:
        """Cut an unterminated fragment off the end (a killed append); describe it, or None.

        Must be called with the file lock held (so no live writer is mid-append).
        """
        try:
            with self.path.open("rb+") as handle:
                end = handle.seek(0, os.SEEK_END)
                if end == 0:
                    return None
                handle.seek(end - 1)
                if handle.read(1) == b"\n":
                    return None
                pos = end
                while pos > 0:  # back to the last newline, in blocks
                    step = min(8192, pos)
                    handle.seek(pos - step)
                    block = handle.read(step)
                    cut = block.rfind(b"\n")
                    if cut != -1:
                        pos = pos - step + cut + 1
                        break
                    pos -= step
                handle.seek(pos)
                fragment = handle.read()
                handle.truncate(pos)
                handle.flush()
                os.fsync(handle.fileno())
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise AuditError(f"{self.path}: cannot repair a torn last line: {exc}") from exc
        return {
            "offset": pos,
            "bytes": len(fragment),
            "sha256": hashlib.sha256(fragment).hexdigest(),
            "start": fragment[:200].decode("utf-8", errors="backslashreplace"),
        }

    def _locked(self) -> _Locked:
        return _Locked(self._thread_lock, self._file_lock, self.path)

    def _read_head(self) -> tuple[int, str]:
        line = _last_line(self.path)
        if line is None:
            return 0, GENESIS_HASH
        try:
            entry = json.loads(line)
            seq, head = int(entry["seq"]), str(entry["hash"])
        except (ValueError, KeyError, TypeError) as exc:
            raise AuditError(
                f"{self.path}: the last line is not a valid audit event; "
                "run verify_audit_log to locate the damage"
            ) from exc
        return seq, head

    @property
    def head_hash(self) -> str:
        """The hash of the last line on disk (``GENESIS_HASH`` for an empty log)."""
        with self._locked():
            return self._read_head()[1]

    @property
    def seq(self) -> int:
        """The sequence number of the last line on disk (0 for an empty log)."""
        with self._locked():
            return self._read_head()[0]

    def sync(self) -> None:
        """``fsync`` the log: every line appended so far survives a power cut.

        Raises:
            AuditError: the file cannot be synced.
        """
        with self._thread_lock:
            if not self._unsynced:
                return
            try:
                fd = os.open(self.path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError as exc:
                raise AuditError(f"{self.path}: cannot sync: {exc}") from exc
            self._unsynced = False
        with _UNSYNCED_LOCK:
            _UNSYNCED.discard(self)

    def append(self, event: str, /, **fields: Any) -> dict[str, Any]:
        """Append one event and return it exactly as written (with ``seq`` and ``hash``).

        ``fields`` may hold any values; whatever JSON cannot represent is stringified. Large
        payloads (a model call's full request and response) are fine; a caller that keeps
        them in a transcript file can pass its path instead (``transcript="..."``).

        The line is in the file when this returns; the file is ``fsync``'d too when
        ``event`` is in :data:`DURABLE_EVENTS`.

        Raises:
            AuditError: the line could not be written (or synced).
        """
        durable = event in DURABLE_EVENTS
        if self.redactor is not None:
            fields, _ = self.redactor.redact_json(fields, default=jsonable)
        with self._locked():
            seq, prev = self._known_head()
            entry: dict[str, Any] = {
                "ts": datetime.now(UTC).isoformat(timespec="microseconds"),
                "run_id": self.run_id,
                "seq": seq + 1,
                "event": str(event),
                "fields": jsonable(fields),
                "prev_hash": prev,
            }
            entry["hash"] = entry_hash(entry)
            data = (canonical_json(entry) + "\n").encode("utf-8")
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    written = os.write(fd, data)
                    if written != len(data):
                        raise OSError(f"short write ({written} of {len(data)} bytes)")
                    if durable:
                        os.fsync(fd)
                    size = os.fstat(fd).st_size
                finally:
                    os.close(fd)
            except OSError as exc:
                self._head = None
                raise AuditError(f"{self.path}: cannot append: {exc}") from exc
            self._head = (size, entry["seq"], entry["hash"])
            self._unsynced = not durable
        with _UNSYNCED_LOCK:
            if durable:
                _UNSYNCED.discard(self)
            else:
                _UNSYNCED.add(self)
        return entry

    def _known_head(self) -> tuple[int, str]:
        """The head, from this instance's last append when the file has not grown since."""
        known = self._head
        if known is not None:
            try:
                size = self.path.stat().st_size
            except OSError:
                size = -1
            if size == known[0]:
                return known[1], known[2]
        return self._read_head()


class _Locked:
    """Thread lock, then file lock (in that order, so threads never contend on the file)."""

    def __init__(self, thread_lock: threading.Lock, file_lock: Any, path: Path) -> None:
        self._thread_lock = thread_lock
        self._file_lock = file_lock
        self._path = path

    def __enter__(self) -> None:
        self._thread_lock.acquire()
        try:
            self._file_lock.acquire()
        except Exception as exc:
            self._thread_lock.release()
            raise AuditError(f"{self._path}: cannot lock the audit log: {exc}") from exc

    def __exit__(self, *exc_info: object) -> None:
        try:
            self._file_lock.release()
        finally:
            self._thread_lock.release()
