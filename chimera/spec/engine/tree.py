"""File selection for the check engine: which candidate files ``paths`` globs select.

Selection follows DESIGN.md "The Spec": gitignore-style globs (pathspec's ``GitIgnoreSpec``,
the same semantics as a ``.gitignore`` line) matched against the files git sees — ``git
ls-files --cached --others --exclude-standard -z`` inside a repository, so a tracked file
counts even when an ignore rule matches it — and outside a repository against a walk of the
tree minus what its ``.gitignore`` files exclude. ``.git/`` and ``.chimera/`` are never
selected. Like git, the walk does not descend into symlinked directories (so a link loop
cannot hang it).

The globs of one ``paths`` list are read in order and the last one that matches a file decides
(``GitIgnoreSpec``'s rule): ``['docs/', '!docs/img/']`` selects ``docs/`` without
``docs/img/``, and a later ``docs/img/logo.svg`` adds that file back. A ``.gitignore`` differs
here: git cannot re-include a file whose parent folder an earlier line excluded.
"""

# The engine handles thousands of paths per run as plain strings with os/os.path on purpose:
# pathlib objects cost several times more per call on this hot path.

# ruff: noqa: PTH118, PTH123

from __future__ import annotations

import bisect
import logging
import os
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chimera.spec.engine.literal import Listing, literal_globs
from chimera.spec.engine.options import EngineStats
from chimera.spec.engine.resolve import within

if TYPE_CHECKING:
    import pathspec

log = logging.getLogger(__name__)

NEVER_SELECTED = frozenset({".git", ".chimera"})
"""Directory names whose contents no glob ever selects."""

GIT_LS_FILES = ("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z")


def normalize_glob(glob: str) -> str:
    """``glob`` with a leading ``./`` (repeated, or followed by more slashes) turned into the
    root anchor ``/``; other text is kept verbatim, so the glob keeps its gitignore meaning.

    ``./`` names the root, so the glob is anchored there: ``./src/*.py`` is ``/src/*.py``
    (the same files as ``src/*.py``), ``./x.py`` is ``/x.py`` (the root's ``x.py`` only, not
    every ``x.py``), ``.//x`` is ``/x``. Anchoring also keeps the rest a path: ``./!x`` is
    ``/!x`` (the file ``!x``, not a negation) and ``./#x`` is ``/#x`` (the file ``#x``, not a
    comment). A leading ``!`` stays a negation: ``!./gen/`` is ``!/gen/``. Pure; never raises.
    """
    negated = glob.startswith("!")
    out = glob[1:] if negated else glob
    if out.startswith("./"):
        while out.startswith("./"):
            out = out[2:].lstrip("/")
        out = "/" + out
    return ("!" if negated else "") + out


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
        literal_lookup: bool = True,
    ) -> None:
        self.root_real = root_real
        self._hidden = tuple(
            os.path.relpath(h, root_real) + "/" for h in hidden if within(h, root_real)
        )
        self.stats = stats
        self.use_git = use_git
        self._git: tuple[str, ...] | None = None
        self._git_checked = False
        self._dirs: dict[str, _Dir | None] = {}
        self.literal_lookup = literal_lookup
        """Answer all-literal glob lists by lookup, and lists of positive globs by one
        regular expression over the whole list (``False``: every list goes through
        pathspec file by file, the reference both are tested against)."""
        self._selections: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]] = {}
        self._git_listing: Listing | None = None
        self._pools: dict[tuple[tuple[str, ...], tuple[str, ...] | None], Listing] = {}
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
        """Candidates matched by the ``paths`` globs and by none of the ``exclude`` globs.

        Identical glob lists (after :func:`normalize_glob`) are selected once per tree.
        """
        globs = tuple(normalize_glob(p) for p in paths)
        excluded = tuple(normalize_glob(p) for p in exclude)
        key = (globs, excluded)
        chosen = self._selections.get(key)
        if chosen is None:
            chosen = self._selections[key] = tuple(self._select(globs, excluded))
        return list(chosen)

    def _select(self, globs: tuple[str, ...], excluded: tuple[str, ...]) -> list[str]:
        literals = literal_globs(globs) if self.literal_lookup else None
        if literals is None or excluded:
            # Imported here: a re-check answered from the report cache selects nothing, nor
            # do literal scopes (pathspec and its re2 backend are ~0.02 s of a run's start).
            import pathspec
        ex = pathspec.GitIgnoreSpec.from_lines(excluded) if excluded else None
        anchors = self._anchors(globs)
        git = self._git_candidates()
        if self.listing_error is not None:
            return []
        if git is not None:
            if literals is not None:
                chosen = self._git_index().in_pool_order(literals, anchors)
            else:
                include = pathspec.GitIgnoreSpec.from_lines(globs)
                chosen = self._matching(include, _under(git, anchors))
        else:
            prune = ex if ex is not None and not any(g.startswith("!") for g in excluded) else None
            if literals is not None:
                # The walked pool is sorted, so sorted matches are in its order.
                key = (tuple(anchors), excluded if prune is not None else None)
                pool = self._pools.get(key)
                if pool is None:
                    pool = self._pools[key] = Listing(tuple(self._walk_from(anchors, prune)))
                chosen = sorted(pool.matches(literals))
            else:
                include = pathspec.GitIgnoreSpec.from_lines(globs)
                chosen = self._matching(include, self._walk_from(anchors, prune))
        if self._hidden:
            chosen = [p for p in chosen if not (p + "/").startswith(self._hidden)]
        if ex is not None and chosen:
            dropped = set(self._matching(ex, chosen))
            chosen = [p for p in chosen if p not in dropped]
        return chosen

    def _matching(self, spec: pathspec.GitIgnoreSpec, names: Sequence[str]) -> list[str]:
        """The ``names`` ``spec`` includes, in order: by one regular expression over the
        list when every pattern of ``spec`` is positive (:func:`_positive_match`), else
        pathspec file by file."""
        match = _positive_match(spec) if self.literal_lookup else None
        if match is None:
            return list(spec.match_files(names))
        return list(filter(match, names))

    def _git_index(self) -> Listing:
        if self._git_listing is None:
            self._git_listing = Listing(self._git or ())
        return self._git_listing

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


_DIR_GROUP = "(?P<ps_d>"


def _positive_match(spec: pathspec.GitIgnoreSpec) -> Callable[[str], object] | None:
    """One ``re`` search function for every pattern of ``spec`` together, when each is a
    positive glob (no negation): a name is then included exactly when one of them matches
    (pathspec's gitignore rules only rank matches to settle a negation), so the union of
    their regular expressions decides it in C instead of a Python call per pattern and
    name. ``None`` when a pattern is a negation, is not a ``re`` pattern, or names differ
    from pathspec's normal form on this system (other path separators); every pattern's
    directory-marker group becomes a plain group (names must stay unique)."""
    from pathspec import util

    if util.NORMALIZE_PATH_SEPS:
        return None
    sources: list[str] = []
    flags: set[int] = set()
    for pattern in spec.patterns:
        include = getattr(pattern, "include", None)
        if include is None:
            continue  # a comment or a blank line
        regex = getattr(pattern, "regex", None)
        if include is not True or not isinstance(regex, re.Pattern):
            return None
        if regex.groupindex.keys() - {"ps_d"} or regex.pattern.count(_DIR_GROUP) > 1:
            return None
        sources.append(regex.pattern.replace(_DIR_GROUP, "(?:"))
        flags.add(regex.flags)
    if not sources or len(flags) != 1:
        return None
    # ``search``, as pathspec's patterns do (``*/`` compiles to an unanchored ``/``).
    return re.compile("|".join(f"(?:{s})" for s in sources), flags.pop()).search


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
    import pathspec

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
