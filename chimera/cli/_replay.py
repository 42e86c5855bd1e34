"""The replay of ``chimera check``: a re-check of an unchanged tree prints the stored output.

A normal run with the result cache on (see :mod:`chimera.spec.engine.cache` for the trust
rules) whose every result came from, or went into, the whole-report cache
(:mod:`chimera.spec.engine.reports`: ``contains`` / ``absent`` / ``defines`` only, never
``command`` or plugin kinds, never a time-out) and which exited 0 or 1 without a warning,
stores ``.chimera/cache/replay-<key>.json``: the record of what it read
(:class:`~chimera.spec.engine.reports.TreeRecord`), the exact stdout it printed (the summary's
elapsed time left as a hole, filled with the replay's own time; ``--json`` durations as 0, as
nothing is evaluated) and the exit status.

The key (:func:`replay_key`) hashes everything else the output depends on: Chimera's and the
engine's versions, the interpreter and the installed distributions, the size and mtime of
every module of Chimera itself (an editable install's edit), the command's arguments
as typed, the working directory, the checked root, the spec files found and their bytes, the
bytes of both configuration files (``pyproject.toml``, ``chimera.toml``), the environment that
changes the run or its rendering (``CHIMERA_*``, ``NO_COLOR``, ``FORCE_COLOR``, ``TERM``,
``GITHUB_WORKSPACE``) and whether stdout is a terminal, and its encoding. Bytes, not parsed
values: any change is a miss.

:func:`replay` runs before the parser is built and imports neither pydantic nor the Spec: it
finds the key, refuses the cache as the result cache does (``git ls-files .chimera`` must be
empty), and validates the record with :meth:`TreeRecord.holds_for` — the report cache's own
check (git's candidate list, every recorded name, every recorded file's bytes when its stat
data changed or was racy). Anything unusual returns ``None`` and the normal path runs.
"""

# ruff: noqa: PTH113, PTH208, PTH118, PTH120, PTH123

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chimera.spec.engine.reports import TreeRecord

__all__ = ["PREFIX", "Recorder", "config_digests", "parse_check_argv", "replay", "replay_key"]

log = logging.getLogger(__name__)

PREFIX = "replay-"
MAX_ENTRIES = 8
"""Replays kept per root: the oldest written go first."""

FORMAT = 1
"""Version of the replay file; part of the key."""

CONFIG_FILES = ("pyproject.toml", "chimera.toml")
"""Every file :func:`chimera.config.check.load_check_settings` reads, relative to the root."""

ENV_NAMES = ("NO_COLOR", "FORCE_COLOR", "TERM", "GITHUB_WORKSPACE")
"""Variables that change the rendering (colour, annotation paths); ``CHIMERA_*`` are all keyed."""

_VALUED = ("--root", "--format", "--max-evidence")
_FLAGS = ("--json", "--all-evidence")


@dataclass
class CheckArgv:
    """What the replay needs of ``chimera check``'s arguments (the rest is keyed as typed)."""

    root: str | None = None
    spec_paths: list[str] = field(default_factory=list)


def parse_check_argv(argv: Sequence[str]) -> CheckArgv | None:
    """The root and spec paths of ``chimera check``'s arguments (after ``check``), or ``None``
    for anything this small parser does not read exactly as argparse does (``--help``,
    ``--no-cache``, an unknown or abbreviated flag, a missing value, ``--``)."""
    out = CheckArgv()
    i = 0
    while i < len(argv):
        token = argv[i]
        name, eq, value = token.partition("=")
        if token in _FLAGS:
            pass
        elif name in _VALUED:
            if not eq:
                i += 1
                if i >= len(argv) or argv[i].startswith("-"):
                    return None
                value = argv[i]
            if name == "--root":
                out.root = value
        elif token == "--only":
            start = i
            while i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                i += 1
            if i == start:
                return None
        elif token.startswith("-"):
            return None
        else:
            out.spec_paths.append(token)
        i += 1
    return out


def _digest_file(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def _distributions() -> list[str]:
    # Installing, upgrading or removing a package (a plugin, the regex engine) renames or
    # adds a *.dist-info entry: cheap to list, and a miss is always safe.
    names: list[str] = []
    for entry in sys.path:
        try:
            listed = os.listdir(entry or ".")
        except OSError:
            continue
        names.extend(n for n in listed if n.endswith((".dist-info", ".egg-info", ".pth")))
    return sorted(names)


def config_digests(root: Path) -> list[list[str | None]]:
    """``[name, SHA-256 of its bytes or None]`` for each of :data:`CONFIG_FILES` at ``root``."""
    out: list[list[str | None]] = []
    for name in CONFIG_FILES:
        config = os.path.join(root, name)
        out.append([name, _digest_file(config) if os.path.isfile(config) else None])
    return out


def replay_key(
    argv: Sequence[str], cwd: Path, root: Path, spec_files: Sequence[Path]
) -> str | None:
    """The key of a replay of ``chimera check argv`` (see the module docstring); ``None``
    when a spec file cannot be read (that run reports an error and is never replayed)."""
    from chimera import __version__
    from chimera.spec.engine.cache import ENGINE_VERSION, code_stamp

    specs: list[list[str]] = []
    for path in spec_files:
        found = _digest_file(str(path))
        if found is None:
            return None
        specs.append([str(path), os.path.realpath(path), found])
    configs = config_digests(root)
    env = sorted(
        (k, v) for k, v in os.environ.items() if k.startswith("CHIMERA_") or k in ENV_NAMES
    )
    stdout = sys.stdout
    isatty = getattr(stdout, "isatty", None)
    terminal = [
        bool(isatty and isatty()),
        getattr(stdout, "encoding", None),
        getattr(stdout, "errors", None),
    ]
    raw = json.dumps(
        [
            FORMAT,
            __version__,
            ENGINE_VERSION,
            sys.version,
            sys.executable,
            _distributions(),
            code_stamp(),
            list(argv),
            str(cwd),
            str(root),
            os.path.realpath(root),
            specs,
            configs,
            env,
            terminal,
        ],
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def _path(root: Path, key: str) -> str:
    from chimera.spec.engine.cache import CACHE_DIR

    return os.path.join(os.path.realpath(root), CACHE_DIR, f"{PREFIX}{key}.json")


def _load(path: str, key: str) -> tuple[TreeRecord, list[str], int] | None:
    from chimera.spec.engine.reports import TreeRecord

    try:
        with open(path, "rb") as handle:
            raw = json.loads(handle.read())
        stdout = raw["stdout"]
        status = raw["status"]
        if (
            raw.get("key") != key
            or status not in (0, 1)
            or not isinstance(stdout, list)
            or not 1 <= len(stdout) <= 2
            or not all(isinstance(part, str) for part in stdout)
        ):
            raise ValueError("not a replay of this run")
        return TreeRecord.from_json(raw["record"]), stdout, int(status)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        log.warning("ignoring the unreadable replay cache %s: %s", path, exc)
        return None


def _lookup(argv: Sequence[str]) -> tuple[str | None, list[str], int] | None:
    """What to print (the root line, stdout's parts, the status) when ``argv`` replays."""
    parsed = parse_check_argv(argv)
    if parsed is None or os.environ.get("CHIMERA_NO_CACHE", "") not in ("", "0"):
        return None
    from chimera.cli._root import find_root
    from chimera.spec.discovery import discover_spec_files

    cwd = Path.cwd()
    line = None
    if parsed.root:
        root = Path(parsed.root)
        if not root.is_dir():
            return None
    else:
        root, why = find_root(cwd)
        if root != cwd:
            line = f"chimera: checking {root} ({why}; --root sets it)"
    if parsed.spec_paths:
        spec_paths = [Path(p) for p in parsed.spec_paths]
    else:
        spec_paths = [Path("specs") if root == cwd else root / "specs"]
        if not spec_paths[0].exists():
            return None
    files = discover_spec_files(spec_paths)
    key = replay_key(argv, cwd, root, files) if files else None
    if key is None:
        return None
    path = _path(root, key)
    found = _load(path, key)
    if found is None:
        return None
    record, stdout, status = found
    from chimera.spec.engine.cache import cache_refusal

    root_real = os.path.realpath(root)
    if cache_refusal(root_real) is not None:
        return None
    if not record.holds_for(root_real, use_git=True, hidden=()):
        return None
    return line, stdout, status


def replay(argv: Sequence[str]) -> int | None:
    """Print the stored output of ``chimera check argv`` (``argv`` after ``check``) and return
    its exit status when the tree and every keyed input are unchanged; ``None`` (having
    printed nothing) when the normal path must run. Never raises while deciding; once it prints,
    stream errors (a closed pipe) propagate as the normal path's would."""
    started = time.monotonic()
    try:
        found = _lookup(argv)
    except Exception:  # anything unusual is the normal path's to report
        log.debug("replay lookup failed", exc_info=True)
        return None
    if found is None:
        return None
    line, stdout, status = found
    if line is not None:
        sys.stderr.write(line + "\n")
    elapsed = f"{time.monotonic() - started:.2f}"
    sys.stdout.write(elapsed.join(stdout))
    return status


class Recorder:
    """Stores the replay of one normal ``chimera check`` run (used by :mod:`.check`).

    Args:
        argv: the arguments after ``check``, as typed.
        cwd: the working directory; ``root``: the checked tree; ``spec_files``: the spec
            files found (the key is taken now and again at :meth:`save`; a change between
            the two stores nothing).
        max_bytes: the largest replay file written; bytes.
        configs_read: :func:`config_digests` taken before the run read its configuration;
            when the files differ now, nothing is stored (the key would name bytes the run
            never read).
    """

    def __init__(
        self,
        argv: Sequence[str],
        cwd: Path,
        root: Path,
        spec_files: Sequence[Path],
        *,
        max_bytes: int,
        configs_read: list[list[str | None]] | None = None,
    ) -> None:
        self._inputs = (list(argv), cwd, root, list(spec_files))
        self.key = replay_key(*self._inputs)
        if configs_read is not None and configs_read != config_digests(root):
            self.key = None
        self.max_bytes = max_bytes
        self._stderr = sys.stderr
        self._warned: list[str] = []

    def watch_stderr(self) -> None:
        """Note anything the run writes on stderr from now on (a warning is situational: such
        a run is not stored); :meth:`stop` puts stderr back."""
        warned = self._warned
        real = self._stderr

        class _Watch:
            def write(self, text: str) -> int:
                warned.append(text)
                return real.write(text)

            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

        sys.stderr = _Watch()

    def stop(self) -> None:
        sys.stderr = self._stderr

    def save(self, record: TreeRecord | None, stdout: list[str], status: int) -> bool:
        """Write the replay (atomically, pruning the oldest past :data:`MAX_ENTRIES`) when the
        run can be replayed; never raises. Returns whether it was written."""
        from chimera.spec.engine.cachefiles import prune_oldest, write_cache_file

        self.stop()
        if (
            record is None
            or self.key is None
            or status not in (0, 1)
            or self._warned
            or replay_key(*self._inputs) != self.key
        ):
            return False
        doc = {"key": self.key, "record": record.to_json(), "stdout": stdout, "status": status}
        data = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
        if len(data) > self.max_bytes:
            return False
        path = _path(self._inputs[2], self.key)
        if not write_cache_file(path, data, what="the replay cache"):
            return False
        prune_oldest(os.path.dirname(path), PREFIX, MAX_ENTRIES)
        return True
