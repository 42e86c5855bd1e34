"""The store of record: SQLite (stdlib) with FTS5 BM25 retrieval; works offline, no embedder.

Every change arrives as a :class:`~chimera.memory.items.JournalOp` through :meth:`MemoryStore.
apply`, so a store rebuilt from the same ops (the branch store's replay) is the same store.
An UPDATE keeps the id and writes a ``history`` row; a DELETE is a tombstone (the row stays,
``deleted = 1``, with the quoted evidence) that RESTORE undoes. Eviction (:meth:`evict`) is
the only hard removal: tombstones first, then the least-used, oldest episodic items, then
semantic ones — never persona.

One module of about 450 lines on purpose: one SQLite schema and the class that owns it; split,
the SQL would sit apart from the tables it reads.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from chimera.errors import ChimeraError
from chimera.localstate import make_dirs
from chimera.memory.items import (
    TAINTED,
    TRUSTED,
    JournalOp,
    MemoryItem,
    OpKind,
    Tier,
    content_hash,
)
from chimera.memory.stopwords import IGNORED

_SCHEMA = """
CREATE TABLE IF NOT EXISTS items(
  rowid INTEGER PRIMARY KEY,
  id TEXT UNIQUE NOT NULL,
  tier TEXT NOT NULL,
  text TEXT NOT NULL,
  hash TEXT NOT NULL,
  provenance TEXT NOT NULL,
  taint_sources TEXT NOT NULL DEFAULT '[]',
  source_run TEXT NOT NULL DEFAULT '',
  source_commit TEXT NOT NULL DEFAULT '',
  created TEXT NOT NULL DEFAULT '',
  updated TEXT NOT NULL DEFAULT '',
  uses INTEGER NOT NULL DEFAULT 0,
  successes INTEGER NOT NULL DEFAULT 0,
  last_used TEXT NOT NULL DEFAULT '',
  deleted INTEGER NOT NULL DEFAULT 0,
  evidence TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL DEFAULT 'note',
  supersedes TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS items_hash ON items(hash);
CREATE TABLE IF NOT EXISTS history(
  seq INTEGER PRIMARY KEY,
  item_id TEXT NOT NULL,
  op TEXT NOT NULL,
  old_text TEXT NOT NULL DEFAULT '',
  new_text TEXT NOT NULL DEFAULT '',
  provenance TEXT NOT NULL DEFAULT '',
  evidence TEXT NOT NULL DEFAULT '',
  run TEXT NOT NULL DEFAULT '',
  ts TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS vectors(item_id TEXT PRIMARY KEY, model TEXT NOT NULL, vec BLOB);
CREATE VIRTUAL TABLE IF NOT EXISTS items_fts USING fts5(
  text, content='items', content_rowid='rowid', tokenize='porter unicode61'
);
"""

_FTS_WORD = re.compile(r"\w+", re.UNICODE)
_COLUMNS = (
    "id, tier, text, provenance, taint_sources, source_run, source_commit, created, updated, "
    "uses, successes, deleted, evidence, kind, supersedes"
)


def fts_query(text: str, *, limit_terms: int = 32, keep_stop_words: bool = False) -> str:
    """An FTS5 ``MATCH`` expression: the distinct words of ``text`` quoted and OR-ed, stop
    words and filler left out (:mod:`chimera.memory.stopwords`; ``keep_stop_words`` keeps them,
    as before that list existed: the benchmark's baseline). '' when no word is left, so a
    query of nothing but "what is the..." matches nothing. Quoting keeps FTS5 operators in
    user text from being parsed."""
    words = list(dict.fromkeys(w.lower() for w in _FTS_WORD.findall(text) if len(w) > 1))
    if not keep_stop_words:
        words = [w for w in words if w not in IGNORED]
    return " OR ".join(f'"{w}"' for w in words[:limit_terms])


def _row_item(row: Sequence[Any]) -> MemoryItem:
    return MemoryItem(
        id=row[0],
        tier=Tier(row[1]),
        text=row[2],
        provenance=row[3],
        taint_sources=tuple(json.loads(row[4] or "[]")),
        source_run=row[5],
        source_commit=row[6],
        created=row[7],
        updated=row[8],
        uses=int(row[9]),
        successes=int(row[10]),
        deleted=bool(row[11]),
        evidence=row[12],
        kind=row[13],
        supersedes=row[14],
    )


class MemoryStore:
    """SQLite file (or ``:memory:``) holding items, their history, FTS5 index and vectors.

    Args:
        path: the database file (its folder is created), e.g. ``.chimera/memory.db``.

    Raises:
        ChimeraError: the file cannot be opened, or this SQLite lacks FTS5.

    Thread-safe (one connection under a lock).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = path
        if str(path) != ":memory:":
            make_dirs(Path(path).parent)
        self._lock = threading.RLock()
        self.version = 0
        """Incremented by every write that changes items or vectors (caches key on it)."""
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False)
            existing = self._db.execute(
                "SELECT count(*) FROM sqlite_master WHERE name = 'items_fts'"
            ).fetchone()[0]
            if not existing:
                # Only a new file is written to: opening an existing store changes no byte.
                # WAL (a setting kept in the file) makes a commit cost no fsync under
                # synchronous=NORMAL; a crash may lose the last commits, never consistency.
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.executescript(_SCHEMA)
            else:
                self._upgrade()
            self._db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            raise ChimeraError(f"{path}: cannot open the memory store: {exc}") from exc

    def _upgrade(self) -> None:
        """Add what a store written by an older Chimera lacks (the ``supersedes`` column);
        a store that has it is not written to."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(items)")}
        if "supersedes" not in columns:
            with self._db:
                self._db.execute("ALTER TABLE items ADD COLUMN supersedes TEXT NOT NULL DEFAULT ''")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- reads -------------------------------------------------------------------------------

    def get(self, item_id: str) -> MemoryItem | None:
        """The item (tombstones included), or ``None``."""
        with self._lock:
            row = self._db.execute(f"SELECT {_COLUMNS} FROM items WHERE id = ?", (item_id,))
            found = row.fetchone()
        return _row_item(found) if found else None

    def find_duplicate(self, tier: Tier, text: str) -> MemoryItem | None:
        """A live item of ``tier`` whose normalised text equals ``text``'s."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM items WHERE hash = ? AND deleted = 0 LIMIT 1",
                (content_hash(tier, text),),
            ).fetchone()
        return _row_item(row) if row else None

    def items(
        self, tiers: Iterable[Tier] | None = None, *, include_deleted: bool = False
    ) -> list[MemoryItem]:
        """Items in insertion order, optionally only of ``tiers``."""
        where, args = self._where(tiers, include_deleted)
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM items {where} ORDER BY rowid", args
            ).fetchall()
        return [_row_item(r) for r in rows]

    def search(
        self,
        query: str,
        k: int = 5,
        tiers: Iterable[Tier] | None = None,
        *,
        keep_stop_words: bool = False,
    ) -> list[tuple[float, MemoryItem]]:
        """The ``k`` live items BM25 ranks best for ``query``, best first, as ``(score,
        item)`` with a score > 0 (higher is better). Stop words and filler in ``query`` match
        nothing (``keep_stop_words``: they do, as before; the benchmark's baseline)."""
        match = fts_query(query, keep_stop_words=keep_stop_words)
        if not match or k <= 0:
            return []
        where, args = self._where(tiers, False, prefix="i.")
        where = where.replace("WHERE", "AND", 1)
        with self._lock:
            rows = self._db.execute(
                f"SELECT {', '.join('i.' + c.strip() for c in _COLUMNS.split(','))}, "
                "bm25(items_fts) AS score FROM items_fts JOIN items i ON i.rowid = "
                f"items_fts.rowid WHERE items_fts MATCH ? {where} ORDER BY score LIMIT ?",
                (match, *args, k),
            ).fetchall()
        return [(-float(r[-1]), _row_item(r[:-1])) for r in rows]

    def changes(self, run: str) -> list[dict[str, str]]:
        """The history rows written by ops of ``run``, oldest first, each with its
        ``item_id`` (what the Action's agent job proposes besides its new items)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT item_id, op, old_text, new_text, provenance, evidence, run, ts FROM "
                "history WHERE run = ? ORDER BY seq",
                (run,),
            ).fetchall()
        keys = ("item_id", "op", "old_text", "new_text", "provenance", "evidence", "run", "ts")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def history(self, item_id: str) -> list[dict[str, str]]:
        """The item's history rows, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT op, old_text, new_text, provenance, evidence, run, ts FROM history "
                "WHERE item_id = ? ORDER BY seq",
                (item_id,),
            ).fetchall()
        keys = ("op", "old_text", "new_text", "provenance", "evidence", "run", "ts")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def stats(self) -> tuple[int, int]:
        """``(items, bytes of text)`` over every stored row (tombstones included)."""
        with self._lock:
            n, size = self._db.execute(
                "SELECT count(*), coalesce(sum(length(CAST(text AS BLOB))), 0) FROM items"
            ).fetchone()
        return int(n), int(size)

    @staticmethod
    def _where(
        tiers: Iterable[Tier] | None, include_deleted: bool, prefix: str = ""
    ) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        args: list[Any] = []
        if tiers is not None:
            names = [Tier(t).value for t in tiers]
            clauses.append(f"{prefix}tier IN ({', '.join('?' * len(names))})")
            args.extend(names)
        if not include_deleted:
            clauses.append(f"{prefix}deleted = 0")
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", args

    # -- writes ------------------------------------------------------------------------------

    def apply(self, op: JournalOp) -> bool:
        """Apply one op; ``False`` when it changes nothing (an ADD of an existing id or of a
        live exact duplicate, an op on a missing item, a DELETE of a tombstone...).

        Raises:
            ChimeraError: the database cannot be written.
        """
        return self.apply_many([op]) == 1

    def apply_many(self, ops: Iterable[JournalOp]) -> int:
        """Apply ``ops`` in order in one transaction (replay, import); how many changed it.

        Raises:
            ChimeraError: the database cannot be written (nothing of ``ops`` is applied).
        """
        try:
            with self._lock, self._db:
                changed = sum(self._apply(op) for op in ops)
                self.version += 1 if changed else 0
                return changed
        except sqlite3.Error as exc:
            raise ChimeraError(f"{self.path}: cannot write the memory store: {exc}") from exc

    def _apply(self, op: JournalOp) -> bool:
        db = self._db
        if op.op is OpKind.ADD:
            if self._rowid(op.id) is not None or self.find_duplicate(op.tier, op.text):
                return False
            cur = db.execute(
                "INSERT INTO items(id, tier, text, hash, provenance, taint_sources, source_run,"
                " source_commit, created, updated, kind, supersedes)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    op.id,
                    op.tier.value,
                    op.text,
                    content_hash(op.tier, op.text),
                    op.provenance,
                    json.dumps(list(op.taint_sources)),
                    op.run,
                    op.commit,
                    op.ts,
                    op.ts,
                    op.kind,
                    op.supersedes,
                ),
            )
            db.execute("INSERT INTO items_fts(rowid, text) VALUES (?, ?)", (cur.lastrowid, op.text))
            self._history(op, "", op.text)
            return True
        rowid = self._rowid(op.id)
        item = self.get(op.id)
        if rowid is None or item is None:
            return False
        if op.op is OpKind.UPDATE:
            if item.deleted or not op.text or op.text == item.text:
                return False
            tainted = item.tainted or op.provenance == TAINTED
            sources = list(dict.fromkeys((*item.taint_sources, *op.taint_sources)))
            self._unindex(rowid, item.text)
            db.execute(
                "UPDATE items SET text = ?, hash = ?, updated = ?, provenance = ?, "
                "taint_sources = ? WHERE rowid = ?",
                (
                    op.text,
                    content_hash(item.tier, op.text),
                    op.ts,
                    TAINTED if tainted else TRUSTED,
                    json.dumps(sources if tainted else []),
                    rowid,
                ),
            )
            db.execute("INSERT INTO items_fts(rowid, text) VALUES (?, ?)", (rowid, op.text))
            self._history(op, item.text, op.text)
            return True
        if op.op is OpKind.DELETE:
            if item.deleted:
                return False
            self._unindex(rowid, item.text)
            db.execute(
                "UPDATE items SET deleted = 1, evidence = ?, updated = ? WHERE rowid = ?",
                (op.evidence, op.ts, rowid),
            )
            self._history(op, item.text, "")
            return True
        if op.op is OpKind.RESTORE:
            if not item.deleted or self.find_duplicate(item.tier, item.text):
                return False
            db.execute(
                "UPDATE items SET deleted = 0, evidence = '', updated = ? WHERE rowid = ?",
                (op.ts, rowid),
            )
            db.execute("INSERT INTO items_fts(rowid, text) VALUES (?, ?)", (rowid, item.text))
            self._history(op, "", item.text)
            return True
        if op.op is OpKind.PROMOTE:
            if not item.tainted:
                return False
            db.execute(
                "UPDATE items SET provenance = ?, taint_sources = '[]', updated = ? "
                "WHERE rowid = ?",
                (TRUSTED, op.ts, rowid),
            )
            self._history(op, item.text, item.text)
            return True
        return False

    def _rowid(self, item_id: str) -> int | None:
        row = self._db.execute("SELECT rowid FROM items WHERE id = ?", (item_id,)).fetchone()
        return int(row[0]) if row else None

    def _unindex(self, rowid: int, text: str) -> None:
        self._db.execute(
            "INSERT INTO items_fts(items_fts, rowid, text) VALUES ('delete', ?, ?)", (rowid, text)
        )

    def _history(self, op: JournalOp, old: str, new: str) -> None:
        self._db.execute(
            "INSERT INTO history(item_id, op, old_text, new_text, provenance, evidence, run, ts)"
            " VALUES (?,?,?,?,?,?,?,?)",
            (op.id, op.op.value, old, new, op.provenance, op.evidence, op.run, op.ts),
        )

    def touch(self, ids: Sequence[str], ts: str, *, success: bool = False) -> None:
        """Count a recall of ``ids`` (``success``: count a success instead)."""
        if not ids:
            return
        column = "successes" if success else "uses"
        marks = ", ".join("?" * len(ids))
        with self._lock, self._db:
            self._db.execute(
                f"UPDATE items SET {column} = {column} + 1, last_used = ? WHERE id IN ({marks})",
                (ts, *ids),
            )

    def evict(self, max_items: int, max_bytes: int) -> list[str]:
        """Hard-remove rows until at most ``max_items`` rows and ``max_bytes`` of text remain:
        tombstones first, then episodic items (least used, then least recently used or
        updated, first), then semantic ones. Persona items are never evicted (so the caps may
        stay exceeded by persona alone). Returns the removed ids in order."""
        removed: list[str] = []
        with self._lock, self._db:
            count, size = self.stats()
            if count <= max_items and size <= max_bytes:
                return removed
            order = self._db.execute(
                "SELECT rowid, id, text, deleted FROM items WHERE tier != 'persona' ORDER BY "
                "deleted DESC, CASE tier WHEN 'episodic' THEN 0 ELSE 1 END, uses, "
                "CASE last_used WHEN '' THEN updated ELSE last_used END, rowid"
            ).fetchall()
            for rowid, item_id, text, deleted in order:
                if count <= max_items and size <= max_bytes:
                    break
                if not deleted:
                    self._unindex(rowid, text)
                self._db.execute("DELETE FROM items WHERE rowid = ?", (rowid,))
                self._db.execute("DELETE FROM vectors WHERE item_id = ?", (item_id,))
                count -= 1
                size -= len(text.encode("utf-8"))
                removed.append(item_id)
            self.version += 1
        return removed

    # -- vectors -----------------------------------------------------------------------------

    def put_vector(self, item_id: str, model: str, vec: bytes) -> None:
        with self._lock, self._db:
            self.version += 1
            self._db.execute(
                "INSERT OR REPLACE INTO vectors(item_id, model, vec) VALUES (?,?,?)",
                (item_id, model, vec),
            )

    def vectors(self, model: str) -> list[tuple[str, bytes]]:
        """``(item id, float32 bytes)`` of live items embedded with ``model``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT v.item_id, v.vec FROM vectors v JOIN items i ON i.id = v.item_id "
                "WHERE v.model = ? AND i.deleted = 0",
                (model,),
            ).fetchall()
        return [(str(a), bytes(b)) for a, b in rows]


__all__ = ["MemoryStore", "fts_query"]
