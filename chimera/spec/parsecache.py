"""The parsed-spec cache: a warm ``chimera check`` does not parse unchanged spec files again.

Parsing a spec file (YAML with the ``line:col`` of every node) is the largest cost of a
re-check answered from the report cache. An entry holds one file's
:class:`~chimera.spec.yamldoc.YamlDocument` — the plain value, the marks of its nodes and
keys — as JSON under ``.chimera/cache/spec-<key>.json``, keyed by SHA-256 of Chimera's version
and code (an editable install's edit) and the file's decoded text. Validation (the pydantic
models, cross-file checks) still runs on every load, from the cached value and marks, so
every verdict, message and position is the one a fresh parse gives.

Only clean documents are stored: no YAML issue, no syntax error, not empty, and a value
JSON gives back exactly (mappings with string keys free of the path separator, lists,
strings, integers, finite floats, booleans, null). Anything else is parsed afresh each time.

Trust is that of the result cache (:mod:`chimera.spec.engine.cache`): a forged entry could
make a requirement vanish, so the cache is only built when the caller trusts the tree's
cache and ``git ls-files .chimera`` lists nothing. Writes are atomic; at most
:data:`MAX_ENTRIES` entries are kept (the oldest written go first).
"""

# One open/stat per spec file: plain os calls, as in engine/files.py.
# ruff: noqa: PTH118, PTH123

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from collections.abc import Iterator
from typing import Any

from chimera import __version__
from chimera.spec.engine.cache import CACHE_DIR, cache_refusal, code_stamp
from chimera.spec.engine.cachefiles import prune_oldest, write_cache_file
from chimera.spec.yamldoc import NodePath, Position, YamlDocument

log = logging.getLogger(__name__)

MAX_ENTRIES = 64
"""Parsed files kept per root (several specs, several versions of each while editing)."""

PREFIX = "spec-"
SEP = "\x1f"
"""Separates the parts of an encoded node path."""
FORMAT = 1
"""Bumped whenever the entry layout changes."""


def parse_key(text: str, stamp: str = "") -> str:
    """The key of a spec file's decoded text (SHA-256 of the version, format, ``stamp`` —
    :func:`~chimera.spec.engine.cache.code_stamp`, so an edit of the parser is a miss — and
    text)."""
    digest = hashlib.sha256(f"{__version__}\0{FORMAT}\0{stamp}\0".encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:40]


def _exact(value: Any) -> bool:
    """Whether JSON gives ``value`` back unchanged (types included)."""
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_exact(v) for v in value)
    if isinstance(value, dict):
        # A key holding the path separator could collide with another path (see _encode).
        return all(isinstance(k, str) and SEP not in k and _exact(v) for k, v in value.items())
    return False


def _encode(path: Any) -> str | None:
    # Keys and indices stay apart ("s" + key, "i" + index): a mapping may have the key "0".
    if not isinstance(path, tuple):
        return None
    return SEP.join(("s" + p) if isinstance(p, str) else ("i" + str(p)) for p in path)


def _decode(code: str) -> NodePath:
    if not code:
        return ()
    return tuple(p[1:] if p[0] == "s" else int(p[1:]) for p in code.split(SEP))


def _marks_json(marks: dict[NodePath, Position]) -> dict[str, list[int]]:
    return {_encode(path) or "": [m[0], m[1]] for path, m in marks.items()}


class StoredMarks(dict[NodePath, Position]):
    """The marks of a cached document, decoded on demand.

    A spec's validation looks up a few marks per requirement; decoding every node's mark
    up front cost more than the parse it saves. Lookups (``get``, ``in``, ``[]``) decode
    one entry; anything else (iteration, ``len``, ``==``) decodes them all first.
    """

    def __init__(self, raw: dict[str, list[int]]) -> None:
        super().__init__()
        self._raw = raw
        self._full = False

    def _materialise(self) -> None:
        if not self._full:
            self._full = True
            super().update({_decode(k): (v[0], v[1]) for k, v in self._raw.items()})

    def get(self, key: NodePath, default: Any = None) -> Any:
        code = _encode(key)
        found = self._raw.get(code) if code is not None else None
        return (found[0], found[1]) if found is not None else default

    def __contains__(self, key: object) -> bool:
        code = _encode(key)
        return code is not None and code in self._raw

    def __getitem__(self, key: NodePath) -> Position:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[NodePath]:
        self._materialise()
        return super().__iter__()

    def __len__(self) -> int:
        return len(self._raw)

    def __eq__(self, other: object) -> bool:
        self._materialise()
        return super().__eq__(other)

    __hash__ = None

    def __repr__(self) -> str:
        self._materialise()
        return super().__repr__()

    def keys(self) -> Any:
        self._materialise()
        return super().keys()

    def values(self) -> Any:
        self._materialise()
        return super().values()

    def items(self) -> Any:
        self._materialise()
        return super().items()

    def copy(self) -> dict[NodePath, Position]:
        self._materialise()
        return dict(super().items())


class ParseCache:
    """Parsed spec files of one root (``<root>/.chimera/cache/spec-<key>.json``).

    Build it with :meth:`for_root`, which refuses (returns ``None``) when git cannot vouch
    for the tree's ``.chimera``.
    """

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.stamp = code_stamp()
        self.hits = 0
        self.misses = 0

    @classmethod
    def for_root(cls, root: str | os.PathLike[str]) -> ParseCache | None:
        """The cache of ``root``, or ``None`` when git cannot vouch for it
        (:func:`~chimera.spec.engine.cache.cache_refusal`: a cache file that came with the
        tree could forge a load)."""
        real = os.path.realpath(root)
        if cache_refusal(real) is not None:
            return None
        return cls(os.path.join(real, CACHE_DIR))

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, f"{PREFIX}{key}.json")

    def lookup(self, text: str) -> YamlDocument | None:
        """The stored parse of ``text``, or ``None`` (never raises)."""
        key = parse_key(text, self.stamp)
        try:
            with open(self._path(key), "rb") as handle:
                raw = json.loads(handle.read())
            if raw.get("key") != key:
                raise ValueError("entry stored under another key")
            doc = YamlDocument(
                value=raw["value"],
                marks=StoredMarks(dict(raw["marks"])),
                key_marks=StoredMarks(dict(raw["keys"])),
            )
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("ignoring the unreadable spec cache entry %s: %s", self._path(key), exc)
            self.misses += 1
            return None
        self.hits += 1
        return doc

    def store(self, text: str, doc: YamlDocument) -> None:
        """Keep a clean parse of ``text`` (see the module docstring); never raises."""
        if doc.issues or doc.broken or doc.syntax_error or doc.empty or not _exact(doc.value):
            return
        key = parse_key(text, self.stamp)
        entry = {
            "key": key,
            "value": doc.value,
            "marks": _marks_json(doc.marks),
            "keys": _marks_json(doc.key_marks),
        }
        # ASCII escapes: a lone surrogate (a YAML "\\ud800" escape) survives the round trip.
        data = json.dumps(entry, separators=(",", ":")).encode("ascii")
        if write_cache_file(self._path(key), data, what="the spec cache"):
            prune_oldest(self.directory, PREFIX, MAX_ENTRIES)
