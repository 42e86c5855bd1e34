"""SpecCache: ``load_spec`` that parses a set of spec files again only when their bytes change.

The ProjectOrchestrator reads the Spec before each card and again after it (the change may
have touched ``specs/``: that is how tampering is caught). Most cards change only code, so the
second read of one card is the first of the next: parsing and validating again would give an
equal Spec. The key is every discovered file's path and SHA-256, so any edit, added or
removed file parses again; a :class:`~chimera.spec.model.Spec` is frozen, so sharing it is safe.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

from chimera.errors import ChimeraError
from chimera.spec.loader import discover_spec_files, load_spec
from chimera.spec.model import Spec

Key = tuple[tuple[str, str], ...]


class SpecCache:
    """A ``SpecLoader`` (``paths -> Spec``) memoized on the files' content.

    Args:
        load: the loader behind the cache (default :func:`chimera.spec.loader.load_spec`).

    Raises (on call): what ``load`` raises (``SpecError``, ``UsageError``); a failed load is
    not cached.
    """

    def __init__(self, load: Callable[[Sequence[Path]], Spec] = load_spec) -> None:
        self._load = load
        self._cached: dict[tuple[str, ...], tuple[Key, Spec]] = {}
        self.parses = 0
        """How many times ``load`` ran (a cache miss)."""

    def __call__(self, paths: Sequence[Path]) -> Spec:
        which = tuple(str(p) for p in paths)
        key = _content_key(paths)
        hit = self._cached.get(which)
        if key is not None and hit is not None and hit[0] == key:
            return hit[1]
        spec = self._load(list(paths))
        self.parses += 1
        if key is not None:
            self._cached[which] = (key, spec)
        return spec


def _content_key(paths: Sequence[Path]) -> Key | None:
    """Every discovered file's path and digest; ``None`` (no caching) if any is unreadable,
    so the loader raises its own one-line error."""
    try:
        files = discover_spec_files(list(paths))
        return tuple((str(f), hashlib.sha256(f.read_bytes()).hexdigest()) for f in files)
    except (ChimeraError, OSError):
        return None
