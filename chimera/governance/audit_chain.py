"""The audit log's hash chain: the canonical JSON of an event, its hash, and
:func:`verify_audit_log`, which checks a log's chain (and, given the recorded head, its end).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePath
from typing import Any

GENESIS_HASH = "0" * 64
"""The ``prev_hash`` of a log's first line."""


_KEYS = frozenset({"ts", "run_id", "seq", "event", "fields", "prev_hash", "hash"})


def jsonable(value: Any) -> Any:
    """A JSON-safe copy of ``value``: unknown types become strings, never an exception.

    The conversion :meth:`AuditLog.append` applies to an event's fields: the ``default`` to
    give :meth:`SecretRedactor.redact_json` for audited fields."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        items = [jsonable(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    if isinstance(value, datetime):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    dump = getattr(value, "model_dump", None)  # pydantic models
    if callable(dump):
        try:
            return jsonable(dump(mode="json"))
        except Exception:
            pass
    return str(value)


def canonical_json(obj: Mapping[str, Any]) -> str:
    """The canonical text hashed and written: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def entry_hash(entry: Mapping[str, Any]) -> str:
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class AuditVerification:
    """The result of :func:`verify_audit_log`.

    Attributes:
        ok: no problem was found.
        count: lines read (including damaged ones).
        head_hash: the ``hash`` of the last line, ``None`` for an empty or unreadable log.
        problems: one message per problem, each naming ``file:line``.
    """

    ok: bool
    count: int
    head_hash: str | None
    problems: list[str] = field(default_factory=list)


def verify_audit_log(path: Path, head: str | None = None) -> AuditVerification:
    """Check an audit log's hash chain; with ``head``, also that nothing was cut off the end.

    Detects an edited line (its hash no longer matches its content), a deleted or reordered
    line (``prev_hash`` / ``seq`` breaks), a malformed line, and — given the head hash recorded
    elsewhere — a truncated tail or a rewritten chain. Never raises for a damaged log.
    """
    path = Path(path)
    name = path.name
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return AuditVerification(False, 0, None, [f"{name}: cannot read: {exc.strerror or exc}"])
    problems: list[str] = []
    prev_hash = GENESIS_HASH
    prev_seq = 0
    last_hash: str | None = None
    hashes: dict[str, int] = {}
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        problems.append(f"{name}:{len(lines)}: last line is not terminated (torn write?)")
    for number, line in enumerate(lines, start=1):
        where = f"{name}:{number}"
        try:
            entry = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            problems.append(f"{where}: not valid JSON")
            last_hash = None
            continue
        if not isinstance(entry, dict) or set(entry) != _KEYS:
            problems.append(f"{where}: not an audit event (keys differ)")
            last_hash = None
            continue
        recorded = entry["hash"]
        if entry_hash(entry) != recorded:
            problems.append(f"{where}: content does not match its hash (line edited)")
        seq = entry["seq"]
        seq_ok = isinstance(seq, int) and seq == prev_seq + 1
        if entry["prev_hash"] != prev_hash:
            if entry["prev_hash"] in hashes:
                problems.append(
                    f"{where}: chain points back to line {hashes[entry['prev_hash']]}, not to "
                    f"line {number - 1} (lines deleted or reordered)"
                )
            elif isinstance(seq, int) and seq > prev_seq + 1:
                problems.append(
                    f"{where}: {seq - prev_seq - 1} line(s) missing before this line "
                    f"(seq jumps from {prev_seq} to {seq}; chain broken)"
                )
            else:
                problems.append(
                    f"{where}: prev_hash does not match the previous line (chain broken)"
                )
        elif not seq_ok:
            problems.append(f"{where}: seq {seq!r} does not follow {prev_seq}")
        prev_seq = seq if isinstance(seq, int) else prev_seq + 1
        prev_hash = str(recorded)
        last_hash = str(recorded)
        hashes.setdefault(str(recorded), number)
    count = len(lines)
    if head is not None and last_hash != head:
        if head in hashes:
            problems.append(
                f"{name}:{hashes[head]}: the recorded head is this line, but the log continues "
                f"to line {count}"
            )
        else:
            problems.append(
                f"{name}:{count}: the recorded head hash is not in the log (truncated or rewritten)"
            )
    return AuditVerification(not problems, count, last_hash, problems)
