"""File selection and reading for the check engine, fail closed.

Selection (``paths`` globs) follows DESIGN.md "The Spec": gitignore-style globs (pathspec's
``GitIgnoreSpec``, the same semantics as a ``.gitignore`` line) matched against the files git
sees — ``git ls-files --cached --others --exclude-standard -z`` inside a repository, so a
tracked file counts even when an ignore rule matches it — and outside a repository against a
walk of the tree minus what its ``.gitignore`` files exclude. ``.git/`` and ``.chimera/`` are
never selected. Like git, the walk does not descend into symlinked directories (so a link
loop cannot hang it); a symlinked file is read through its target only when the target is a
regular file inside the root, and each real file is scanned once however many names select it.

Reading turns every way a file can fail to be text into an :class:`Unscannable` with the
reason (binary, undecodable, over the size limit, unreadable, broken or looping link, link
leaving the root, not a regular file), which the kinds treat as "never evidence of absence".
"""

# The engine handles thousands of paths per run as plain strings with os/os.path on purpose:
# pathlib objects cost several times more per call on this hot path.
# ruff: noqa: PTH112, PTH116, PTH118, PTH123

from __future__ import annotations

import bisect
import codecs
import errno
import logging
import os
import posixpath
import stat
import subprocess
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pathspec

from chimera.errors import FileTooLarge, NotARegularFile
from chimera.spec.context import Unscannable
from chimera.spec.engine.options import EngineOptions, EngineStats

log = logging.getLogger(__name__)

NEVER_SELECTED = frozenset({".git", ".chimera"})
"""Directory names whose contents no glob ever selects."""

IS_DIRECTORY = "is a directory, not a file"
"""The reason given for a directory (or a link to one) named where a file is expected; glob
selection skips these silently, as git does (it never descends into a linked directory)."""

GIT_LS_FILES = ("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z")


def normalize_glob(glob: str) -> str:
    """Drop leading ``./`` (``./src/*.py`` is ``src/*.py``, ``!./gen/`` is ``!gen/``); other
    text is kept verbatim, so the glob keeps its gitignore meaning."""
    negated = glob.startswith("!")
    out = glob[1:] if negated else glob
    while out.startswith("./"):
        out = out[2:].lstrip("/")
    return ("!" if negated else "") + out


def normalize_relpath(path: str) -> str | None:
    """``path`` relative to the root in normal form, or ``None`` when it leaves the root.

    ``./a//b/../c`` becomes ``a/c``; absolute paths and paths climbing above the root with
    ``..`` return ``None``.
    """
    if path.startswith("/"):
        return None
    norm = posixpath.normpath(path)
    if norm == ".." or norm.startswith("../"):
        return None
    return "" if norm == "." else norm


@dataclass(frozen=True, slots=True)
class Target:
    """A selected name (``rel``, as the user sees it) and the real file read for it."""

    rel: str
    real: str


def _within(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip("/") + "/")


class Resolver:
    """Maps selected names to the real files behind them, confined to the root.

    Directory real paths are cached, so resolving thousands of files costs one ``lstat``
    each plus one ``realpath`` per directory.
    """

    def __init__(self, root_real: str, hidden: Sequence[str] = ()) -> None:
        self.root_real = root_real
        self.hidden = tuple(hidden)
        self._dirs: dict[str, str | Unscannable | None] = {"": root_real}
        self._files: dict[str, Target | Unscannable | None] = {}

    def _real_dir(self, rel_dir: str) -> str | Unscannable | None:
        if rel_dir in self._dirs:
            return self._dirs[rel_dir]
        result: str | Unscannable | None
        try:
            real = os.path.realpath(os.path.join(self.root_real, rel_dir), strict=True)
        except FileNotFoundError:
            result = None
        except (OSError, RuntimeError):
            result = Unscannable(rel_dir, "symlink loop in its directory path")
        else:
            if not _within(real, self.root_real):
                result = Unscannable(rel_dir, "directory link points outside the root (refused)")
            elif not os.path.isdir(real):
                result = None
            else:
                result = real
        self._dirs[rel_dir] = result
        return result

    def resolve(self, rel: str) -> Target | Unscannable | None:
        """The real file behind ``rel``; ``None`` when nothing exists there.

        Links are followed only to a regular file inside the root; anything else is an
        :class:`Unscannable` naming why. Answers are cached for the session.
        """
        if rel in self._files:
            return self._files[rel]
        found = self._resolve(rel)
        if isinstance(found, Target) and any(_within(found.real, h) for h in self.hidden):
            found = Unscannable(rel, "held out (refused)")
        self._files[rel] = found
        return found

    def answers(self) -> dict[str, Target | Unscannable | None]:
        """Every name resolved so far and its answer (a copy)."""
        return dict(self._files)

    def _resolve(self, rel: str) -> Target | Unscannable | None:
        rel_dir, _, name = rel.rpartition("/")
        real_dir = self._real_dir(rel_dir)
        if real_dir is None:
            return None
        if isinstance(real_dir, Unscannable):
            return Unscannable(rel, real_dir.reason)
        full = os.path.join(real_dir, name)
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            return Unscannable(rel, f"unreadable: {exc.strerror or exc}")
        if stat.S_ISREG(st.st_mode):
            return Target(rel, full)
        if stat.S_ISDIR(st.st_mode):
            return Unscannable(rel, IS_DIRECTORY)
        if not stat.S_ISLNK(st.st_mode):
            return Unscannable(rel, "not a regular file")
        try:
            real = os.path.realpath(full, strict=True)
        except FileNotFoundError:
            return Unscannable(rel, "broken symlink")
        except RuntimeError:
            return Unscannable(rel, "symlink loop")
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return Unscannable(rel, "symlink loop")
            return Unscannable(rel, f"unreadable: {exc.strerror or exc}")
        try:
            target_st = os.stat(real)
        except OSError as exc:
            return Unscannable(rel, f"unreadable: {exc.strerror or exc}")
        if stat.S_ISDIR(target_st.st_mode):
            return Unscannable(rel, IS_DIRECTORY)
        if not _within(real, self.root_real):
            return Unscannable(rel, "symlink points outside the root (refused)")
        if not stat.S_ISREG(target_st.st_mode):
            return Unscannable(rel, "not a regular file")
        return Target(rel, real)


_GLOB_META = frozenset("*?[")


def anchor_dir(glob: str) -> str | None:
    """The directory a positive gitignore-style glob is confined to ('' for the root).

    A glob with a slash before its end is anchored at the root, so its leading literal
    segments name the only directory it can match under (``src/pkg/**/*.py`` -> ``src/pkg``).
    A glob without such a slash matches at any depth: ``None``.
    """
    body = glob[1:] if glob.startswith("/") else glob
    stripped = body.rstrip("/")
    if "/" not in stripped and not glob.startswith("/"):
        return None
    segments = stripped.split("/")[:-1]
    literal: list[str] = []
    for segment in segments:
        if _GLOB_META.intersection(segment) or segment in ("", ".", ".."):
            break
        literal.append(segment)
    return "/".join(literal)


@dataclass(frozen=True, slots=True)
class _Dir:
    files: tuple[str, ...]
    dirs: tuple[str, ...]
    ignores: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]


class FileTree:
    """The candidate files under a root and glob selection over them.

    Inside a git repository the candidates are git's list (one ``git ls-files`` call).
    Otherwise directories are listed lazily and cached, starting from the directories the
    globs are anchored to and skipping directories the ``exclude`` globs remove, so a scope
    never pays for parts of the tree it cannot select.
    """

    def __init__(
        self,
        root_real: str,
        stats: EngineStats,
        *,
        use_git: bool = True,
        hidden: Sequence[str] = (),
    ) -> None:
        self.root_real = root_real
        self._hidden = tuple(
            os.path.relpath(h, root_real) + "/" for h in hidden if _within(h, root_real)
        )
        self.stats = stats
        self.use_git = use_git
        self._git: tuple[str, ...] | None = None
        self._git_checked = False
        self._dirs: dict[str, _Dir | None] = {}
        self.source = ""
        """``git`` or ``walk``: where candidates come from (known after the first select)."""
        self.listing_error: str | None = None
        """Set when git refuses a repository (e.g. "dubious ownership"): a walk honouring
        ``.gitignore`` would skip tracked files an ignore rule matches, so no selection is
        made and every ``paths`` scope is an ``error`` (fail closed)."""

    def _git_candidates(self) -> tuple[str, ...] | None:
        if not self._git_checked:
            self._git_checked = True
            listed = self._git_files() if self.use_git else None
            if listed is not None:
                self.stats.listings += 1
                self._git = tuple(sorted(p for p in set(listed) if _selectable(p)))
            self.source = "git" if listed is not None else "walk"
        return self._git

    def git_listing(self) -> tuple[str, ...] | None:
        """git's candidates, sorted (``None`` when git gave none: not a repository, git
        refused it, or ``use_git`` is off); lists once."""
        listed = self._git_candidates()
        return None if self.listing_error is not None else listed

    @property
    def consulted(self) -> bool:
        """Whether a selection has listed the candidates (git's or the walk's)."""
        return self._git_checked

    def select(self, paths: Sequence[str], exclude: Sequence[str]) -> list[str]:
        """Candidates matched by the ``paths`` globs and by none of the ``exclude`` globs."""
        globs = [normalize_glob(p) for p in paths]
        include = pathspec.GitIgnoreSpec.from_lines(globs)
        excluded = [normalize_glob(p) for p in exclude]
        ex = pathspec.GitIgnoreSpec.from_lines(excluded) if excluded else None
        anchors = self._anchors(globs)
        git = self._git_candidates()
        if self.listing_error is not None:
            return []
        if git is not None:
            pool = _under(git, anchors)
        else:
            prune = ex if ex is not None and not any(g.startswith("!") for g in excluded) else None
            pool = self._walk_from(anchors, prune)
        chosen = list(include.match_files(pool))
        if self._hidden:
            chosen = [p for p in chosen if not (p + "/").startswith(self._hidden)]
        if ex is not None and chosen:
            dropped = set(ex.match_files(chosen))
            chosen = [p for p in chosen if p not in dropped]
        return chosen

    @staticmethod
    def _anchors(globs: Sequence[str]) -> list[str]:
        """Minimal set of directories every positive glob is confined to (``[""]``: all)."""
        dirs: set[str] = set()
        for glob in globs:
            if glob.startswith("!") or not glob.strip() or glob.startswith("#"):
                continue
            anchored = anchor_dir(glob)
            if not anchored:
                return [""]
            dirs.add(anchored)
        minimal = sorted(dirs)
        out: list[str] = []
        for d in minimal:
            if not any(d.startswith(kept + "/") for kept in out):
                out.append(d)
        return out

    # -- the lazy walk -------------------------------------------------------------------

    def _walk_from(self, anchors: Sequence[str], prune: pathspec.GitIgnoreSpec | None) -> list[str]:
        out: list[str] = []
        for anchor in anchors:
            if self._reachable(anchor):
                self._collect(anchor, prune, out)
        return sorted(out)

    def _reachable(self, rel_dir: str) -> bool:
        """Whether ``rel_dir`` is a real, non-ignored directory reached without links."""
        if not rel_dir:
            return True
        parent, _, name = rel_dir.rpartition("/")
        if not self._reachable(parent):
            return False
        listing = self._list(parent)
        return listing is not None and name in listing.dirs

    def _collect(self, rel_dir: str, prune: pathspec.GitIgnoreSpec | None, out: list[str]) -> None:
        listing = self._list(rel_dir)
        if listing is None:
            return
        prefix = rel_dir + "/" if rel_dir else ""
        out.extend(prefix + f for f in listing.files)
        for name in listing.dirs:
            child = prefix + name
            if prune is not None and prune.check_file(child + "/").include:
                continue
            self._collect(child, prune, out)

    def _list(self, rel_dir: str) -> _Dir | None:
        if rel_dir in self._dirs:
            return self._dirs[rel_dir]
        if not self._dirs:
            self.stats.listings += 1
        parent_ignores: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()
        if rel_dir:
            parent = self._list(rel_dir.rpartition("/")[0])
            parent_ignores = parent.ignores if parent is not None else ()
        abs_dir = os.path.join(self.root_real, rel_dir) if rel_dir else self.root_real
        try:
            entries = list(os.scandir(abs_dir))
        except OSError as exc:
            log.warning("cannot list %s: %s", abs_dir, exc)
            self._dirs[rel_dir] = None
            return None
        ignores = parent_ignores
        for entry in entries:
            if entry.name == ".gitignore" and entry.is_file(follow_symlinks=False):
                spec = _read_gitignore(entry.path)
                if spec is not None:
                    ignores = (*parent_ignores, (rel_dir, spec))
                break
        files: list[str] = []
        dirs: list[str] = []
        prefix = rel_dir + "/" if rel_dir else ""
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file(follow_symlinks=False) or entry.is_symlink()
            except OSError:
                continue
            if is_dir:
                if entry.name not in NEVER_SELECTED and not _ignored(
                    prefix + entry.name + "/", ignores
                ):
                    dirs.append(entry.name)
            elif is_file and not _ignored(prefix + entry.name, ignores):
                # Symlinks are listed like git lists them (never descended), and resolved
                # at read time: to a file inside the root, or refused with a reason.
                files.append(entry.name)
        listing = _Dir(tuple(sorted(files)), tuple(sorted(dirs)), ignores)
        self._dirs[rel_dir] = listing
        return listing

    def _git_files(self) -> list[str] | None:
        try:
            proc = subprocess.run(
                GIT_LS_FILES,
                cwd=self.root_real,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=120,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning(
                "git ls-files unavailable in %s (%s); walking the tree", self.root_real, exc
            )
            return None
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            # Outside any repository a walk is the documented rule; a tree that has a .git of
            # its own (or that git refuses, e.g. "dubious ownership") is a repository git
            # cannot read, and guessing its tracked files could skip some.
            broken_repo = os.path.lexists(os.path.join(self.root_real, ".git"))
            if "not a git repository" not in err or broken_repo:
                first = err.splitlines()[0] if err else f"exit {proc.returncode}"
                self.listing_error = (
                    f"git cannot list this repository's files ({first}); a walk would skip "
                    "tracked files that .gitignore excludes, so nothing is selected"
                )
            return None
        names = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
        # A nested repository shows up as "dir/"; git does not list its files, neither do we.
        return [n for n in names if n and not n.endswith("/")]


def _selectable(rel: str) -> bool:
    return not NEVER_SELECTED.intersection(rel.split("/"))


def _under(sorted_paths: tuple[str, ...], anchors: Sequence[str]) -> list[str]:
    """The paths under any of ``anchors`` (``""`` is everything), via binary search."""
    if "" in anchors:
        return list(sorted_paths)
    out: list[str] = []
    for anchor in anchors:
        prefix = anchor + "/"
        lo = bisect.bisect_left(sorted_paths, prefix)
        hi = bisect.bisect_left(sorted_paths, anchor + "0")  # "0" sorts right after "/"
        out.extend(sorted_paths[lo:hi])
    return out


def _read_gitignore(path: str) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return pathspec.GitIgnoreSpec.from_lines(fh.read().splitlines())
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable .gitignore %s: %s", path, exc)
        return None


def _ignored(rel: str, ignores: Sequence[tuple[str, pathspec.GitIgnoreSpec]]) -> bool:
    """git's precedence: the deepest ``.gitignore`` with a matching rule decides."""
    for base, spec in reversed(ignores):
        sub = rel[len(base) + 1 :] if base else rel
        decided = spec.check_file(sub).include
        if decided is not None:
            return bool(decided)
    return False


ReadBytes = Callable[[str, int], bytes]
"""``(real_path, limit) -> bytes``: the reading hook (tests inject failures through it)."""


def read_bytes(real: str, limit: int) -> bytes:
    """Read a regular file of at most ``limit`` bytes (never blocks on a FIFO).

    Raises:
        FileTooLarge: the file has more than ``limit`` bytes.
        NotARegularFile: the path is a FIFO, device or socket.
        OSError: the file cannot be opened or read (permissions, vanished).
    """
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile
        if st.st_size > limit:
            raise FileTooLarge(st.st_size)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise FileTooLarge(len(data))
        return data
    finally:
        os.close(fd)


def _python_encoding(data: bytes) -> str:
    """PEP 263: the coding line of a Python file (``utf-8-sig`` when a BOM is present)."""
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    if b"coding" not in data[: second if second >= 0 else len(data)]:
        return "utf-8-sig"  # no cookie possible: the common case, without tokenize's work
    head = data.split(b"\n", 2)[:2]
    lines = iter(line + b"\n" for line in head)
    encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
    return encoding


def _human_size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} bytes"


def decode_text(rel: str, data: bytes) -> tuple[str | None, str | None]:
    """``(text, None)`` for matching, or ``(None, reason)`` when it is not text.

    UTF-8 (a BOM is dropped); Python files honour a PEP 263 coding line; CRLF becomes LF so
    ``$`` and line numbers behave as in an editor.
    """
    nul = data.find(b"\0")
    if nul >= 0:
        return None, f"binary file (NUL byte at offset {nul})"
    encoding = "utf-8-sig"
    if rel.endswith((".py", ".pyw", ".pyi")):
        try:
            encoding = _python_encoding(data)
        except SyntaxError as exc:
            return None, f"undecodable: {exc.msg}"
    try:
        codecs.lookup(encoding)
        text = data.decode(encoding)
    except LookupError:
        return None, f"undecodable: unknown encoding {encoding!r}"
    except UnicodeDecodeError as exc:
        return None, f"undecodable as {exc.encoding} at byte {exc.start}: {exc.reason}"
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r\n" in text:
        # CRLF is a line end: `$` must work, and line numbers must match editors'.
        text = text.replace("\r\n", "\n")
    return text, None


def load_text(
    target: Target, options: EngineOptions, stats: EngineStats, reader: ReadBytes
) -> str | Unscannable:
    """Read and decode ``target`` once; every failure is an :class:`Unscannable`."""
    stats.reads[target.real] += 1
    try:
        data = reader(target.real, options.max_file_bytes)
    except FileTooLarge as exc:
        return Unscannable(
            target.rel,
            f"over the size limit ({_human_size(exc.size)} > "
            f"{_human_size(options.max_file_bytes)})",
        )
    except NotARegularFile:
        return Unscannable(target.rel, "not a regular file")
    except PermissionError as exc:
        return Unscannable(target.rel, f"unreadable: {exc.strerror or 'permission denied'}")
    except FileNotFoundError:
        return Unscannable(target.rel, "vanished while being read")
    except OSError as exc:
        return Unscannable(target.rel, f"unreadable: {exc.strerror or exc}")
    text, problem = decode_text(target.rel, data)
    if text is None:
        return Unscannable(target.rel, problem or "undecodable")
    return text
