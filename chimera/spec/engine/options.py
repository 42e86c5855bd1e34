"""Tunable limits of the check engine and the counters it keeps (the instrumented hook)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from chimera.config.limits import DEFAULT_MAX_FILE_BYTES, DEFAULT_REGEX_TIMEOUT_S

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """Limits of one engine session (the first two are a project's settings:
    :class:`chimera.spec.settings.CheckSettings`, ``[tool.chimera.check]``).

    Attributes:
        max_file_bytes: a selected file larger than this is not read and never helps a
            requirement pass (fail closed); bytes.
        pattern_timeout_s: time limit of one ``regex`` search of one pattern over one file,
            in seconds of wall-clock time in the main thread of a POSIX process (a
            ``SIGALRM`` timer, :mod:`~chimera.spec.engine.deadline`), else of CPU time (the
            ``regex`` module's ``timeout=``); past it the requirement is ``error``. RE2 and
            literal searches are linear and need none.
        max_pattern_timeouts: after a pattern has timed out in this many files, it is not run
            on further files (they are reported as skipped; fail closed).
        text_cache_bytes: decoded text (and its UTF-8 bytes) kept in memory so that work
            planned after a batched pass (a requirement evaluated without ``prepare``) does
            not read a file again; characters plus bytes, approximate. 0 by default: a pass
            holds one file at a time, so memory is bounded by the largest file, not the tree.
        snippet_chars: longest line snippet reported as evidence; characters.
        min_literal_chars: shortest literal worth prefiltering files with; patterns whose
            best required literal is shorter are run on every file of their scope.
        listing: where ``paths`` globs find candidate files: ``auto`` (git's view inside a
            repository, else a walk honouring ``.gitignore`` files) or ``walk`` (always walk —
            for trees that sit inside someone else's repository, such as an interpreter
            installed by a git-cloned version manager, whose files that repository ignores).
        result_cache: read and write the content-addressed result cache under
            ``.chimera/cache/`` (:mod:`chimera.spec.engine.cache`). Off by default: whoever
            can write the cache can forge a verdict, so only ``chimera check`` and the pytest
            plugin turn it on — never autonomous runs or the Action's verify/publish steps.
        cache_max_bytes: bound of the cache file; bytes.
        hidden: real absolute paths whose files no check reads (held-out requirements, during
            an autonomous run): globs never select them, and a ``path`` naming one is
            unscannable (fail closed).
        linear_engine: let RE2 (the ``fast`` extra) find whether and where a pattern first
            matches a file (a non-ASCII one through its ASCII image), for the patterns it
            reads exactly as ``regex`` does (:mod:`chimera.spec.engine.linear`); verdicts and
            evidence are the same either way.
    """

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    pattern_timeout_s: float = DEFAULT_REGEX_TIMEOUT_S
    max_pattern_timeouts: int = 3
    text_cache_bytes: int = 0
    snippet_chars: int = 200
    min_literal_chars: int = 2
    listing: Literal["auto", "walk"] = "auto"
    result_cache: bool = False
    cache_max_bytes: int = 64 * MIB
    hidden: tuple[str, ...] = ()
    linear_engine: bool = True


@dataclass
class EngineStats:
    """Counters of the work an engine session did, for tests and benchmarks.

    Attributes:
        reads: how many times each file was read, keyed by its real path.
        compiles: how many times each regular expression was compiled, keyed by the pattern.
        listings: how many times the candidate file list was built (git or walk).
        passes: batched multi-pattern passes run.
        regex_runs: pattern searches actually run on a file (after the literal prefilter).
        prefilter_skips: pattern/file pairs skipped because a required literal was absent.
        parses: Python files parsed for ``defines``, keyed by real path.
    """

    reads: Counter[str] = field(default_factory=Counter)
    compiles: Counter[str] = field(default_factory=Counter)
    listings: int = 0
    passes: int = 0
    regex_runs: int = 0
    prefilter_skips: int = 0
    parses: Counter[str] = field(default_factory=Counter)
