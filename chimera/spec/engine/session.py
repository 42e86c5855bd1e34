"""The engine session: plans every announced scan, then reads each file once.

Kinds announce work (``announce_scan`` / ``announce_module``) from their ``prepare()``; the
first ``scan()`` or ``module_index()`` that needs a result runs one batched pass over the
union of the planned files. Planning is per scope, not per file and pattern: the files
selected by the same scopes form a group with one merged plan and one
:class:`~chimera.spec.engine.combined.CombinedMatcher` (with RE2, one ``Set`` over the file's
bytes for every pattern of the group). For each file the pass reads and decodes it once,
asks the matcher which patterns match, runs a pattern's own search only where the matcher
could not decide or where evidence is needed (every match for ``absent``, the first per file
for ``match: all``; for a plain ``contains`` only the first file of the scope that matches is
located, when the scan asks), indexes it for ``defines`` if asked, and forgets its text:
memory holds one file at a time, plus the matches found. Work asked for without an
announcement is planned on the spot.

Why one module past ~400 lines: the batched pass (plan, match, locate, mark done) reads and
writes one per-run plan state; scope selection and read recording are collaborators the
session owns (:class:`~.scopes.Scopes`, :class:`~.recording.ReadLog`), the matcher is in
:mod:`.combined`, and splitting the pass would only spread that state.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chimera.runner import CommandRunner
from chimera.spec.check_context import (
    Definition,
    MatchNeed,
    ModuleIndex,
    ScanRequest,
    ScanResult,
    TextMatch,
    Unscannable,
)
from chimera.spec.engine import reports
from chimera.spec.engine.cache import ResultCache
from chimera.spec.engine.combined import CombinedMatcher, load_re2
from chimera.spec.engine.files import (
    FileTree,
    ReadBytes,
    Resolver,
    Target,
    decode_scan,
    normalize_relpath,
    read_bytes,
)
from chimera.spec.engine.linear import AsciiImages
from chimera.spec.engine.options import EngineOptions, EngineStats
from chimera.spec.engine.patterns import CompiledPattern, PatternCache
from chimera.spec.engine.pyindex import STAR, index_source
from chimera.spec.engine.recording import ReadLog
from chimera.spec.engine.scopes import ScopeKey, Scopes, scope_key
from chimera.spec.engine.stored import (
    COUNT,
    EVERY,
    FIRST,
    FIRST_PER_FILE,
    LEVELS,
    PlanIds,
    Stored,
    answers,
)
from chimera.spec.engine.stored import FileScan as _FileScan

_Located = tuple[int, int, str]
_PatternKey = tuple[str, bool]
_Plan = dict[_PatternKey, int]
"""Pattern key -> how much of its matches a file must give (a level of :mod:`.stored`)."""


def _counted_only(level: int) -> bool:
    """Whether ``level`` counts every match without locating them all."""
    return answers(level, COUNT) and not answers(level, EVERY)


class _Loaded:
    """One file's text as a search needs it (made per file, dropped after it)."""

    __slots__ = ("_images", "ascii", "data", "text")

    def __init__(self, text: str, data: bytes) -> None:
        self.text = text
        self.data = data
        self.ascii = data.isascii()
        self._images: AsciiImages | None = None

    def image(self, cp: CompiledPattern) -> bytes | None:
        """The bytes the pattern's own RE2 may search (see :class:`AsciiImages`)."""
        if self.ascii:
            return self.data
        if cp.stand_ins is None:
            return None
        if self._images is None:
            self._images = AsciiImages(self.text)
        return self._images.image(cp.stand_ins)


class EngineSession:
    """Implements :class:`chimera.spec.check_context.CheckContext` for one root.

    Args:
        root: the checked tree (made absolute; links in it are resolved once).
        runner: runs ``command`` checks.
        options: limits (file size, pattern time limit, caches); defaults are sane for CI.
        stats: counters to fill (pass one in to observe reads and compiles).
        reader: the byte-reading hook ``(real_path, limit) -> bytes``; tests inject failures.
    """

    def __init__(
        self,
        root: Path,
        runner: CommandRunner,
        *,
        options: EngineOptions | None = None,
        stats: EngineStats | None = None,
        reader: ReadBytes | None = None,
    ) -> None:
        self._root = Path(os.path.realpath(root))
        self._root_real = str(self._root)
        self._runner = runner
        self.options = options or EngineOptions()
        self.stats = stats if stats is not None else EngineStats()
        self._reader = reader or read_bytes
        hidden = self.options.hidden
        self._tree = FileTree(
            self._root_real, self.stats, use_git=self.options.listing == "auto", hidden=hidden
        )
        self._resolver = Resolver(self._root_real, hidden)
        # Collaborators: the scopes (selected once each) and the reads (recorded for the
        # report cache once tracked).
        self.scopes = Scopes(self._tree, self._resolver)
        self.reads = ReadLog(self.options, self._reader)
        self._patterns = PatternCache(self.options, self.stats)
        self._re2 = load_re2() if self.options.linear_engine else None
        self._bad: dict[str, str] = {}
        self._texts: dict[str, _Loaded] = {}
        self._text_chars = 0
        self._first: dict[tuple[ScopeKey, _PatternKey], int] = {}
        # Per scope and pattern counted (COUNT): the matches located so far in the pass.
        self._kept: dict[tuple[ScopeKey, _PatternKey], int] = {}
        limit = self.options.evidence_limit
        self._every = EVERY if limit is None else COUNT
        self._modules: dict[str, tuple[dict[str, tuple[Definition, ...]], str | None]] = {}
        # Requests: planned (not yet run) and satisfied (scope key, pattern key, level).
        self._pending: dict[tuple[ScopeKey, _PatternKey, int], CompiledPattern] = {}
        self._satisfied: set[tuple[ScopeKey, _PatternKey, int]] = set()
        self._pending_modules: dict[str, Target] = {}
        # Per real file: the plans run on it (shared objects, never changed once run).
        self._done: dict[str, list[_Plan]] = {}
        # Per pattern key: the files where it matched or timed out.
        self._found: dict[_PatternKey, dict[str, _FileScan]] = {}
        self._timeouts: dict[_PatternKey, int] = {}
        self._matchers: dict[frozenset[_PatternKey], CombinedMatcher] = {}
        self._plan_matchers: dict[int, tuple[_Plan, CombinedMatcher]] = {}
        self.result_cache: ResultCache | None = None
        """The result cache (``options.result_cache``), unless refused (``cache_refusal``)."""
        self.cache_refusal: str | None = None
        if self.options.result_cache and reader is None:
            cache = ResultCache(self._root_real, max_bytes=self.options.cache_max_bytes)
            if cache.disabled is None:
                self.result_cache = cache
            else:
                self.cache_refusal = cache.disabled

    # -- reads and scopes (its collaborators) --------------------------------------------

    def track_reads(self) -> None:
        """From now on, note what each file read was, for :meth:`record`."""
        self.reads.track()

    def record(self, taken: float) -> reports.TreeRecord | None:
        """What this session's file work read, for the report cache; ``None`` when it
        cannot be recorded (a walk instead of git's list, or a pattern timed out)."""
        return self.reads.record(
            taken,
            tree=self._tree,
            resolver=self._resolver,
            result_cache=self.result_cache,
            timed_out=bool(self._timeouts),
        )

    # -- CheckContext -------------------------------------------------------------------

    @property
    def root(self) -> Path:
        return self._root

    @property
    def runner(self) -> CommandRunner:
        return self._runner

    def _is_satisfied(self, skey: ScopeKey, key: _PatternKey, level: int) -> bool:
        return any((skey, key, have) in self._satisfied for have in LEVELS if answers(have, level))

    def _level(self, need: MatchNeed) -> int:
        if need is MatchNeed.FIRST:
            return FIRST
        if need is MatchNeed.FIRST_PER_FILE:
            return FIRST_PER_FILE
        # Every match: located, or only counted when the evidence shown is capped.
        return self._every

    def announce_scan(self, request: ScanRequest) -> None:
        cp = self._patterns.get(request.pattern, request.regex)
        if cp.error is not None:
            return
        skey = scope_key(request)
        scope = self.scopes.scope(skey)
        if scope.error is not None or scope.missing is not None:
            return
        level = self._level(request.need)
        if not self._is_satisfied(skey, cp.key, level):
            self._pending[(skey, cp.key, level)] = cp

    def scan(self, request: ScanRequest) -> ScanResult:
        cp = self._patterns.get(request.pattern, request.regex)
        if cp.error is not None:
            return ScanResult(error=cp.error)
        skey = scope_key(request)
        scope = self.scopes.scope(skey)
        if scope.error is not None:
            return ScanResult(error=scope.error)
        if scope.missing is not None:
            return ScanResult(missing=scope.missing, unscannable=scope.unscannable)
        level = self._level(request.need)
        if not self._is_satisfied(skey, cp.key, level):
            self._pending[(skey, cp.key, level)] = cp
            self.run_pass()
        by_real = scope.by_real
        found = self._found.get(cp.key, {})
        timeouts: list[str] = []
        skipped: list[str] = []
        hit: list[Target] = []
        for real, done in found.items():
            target = by_real.get(real)
            if target is None or real in self._bad:
                continue
            if done.skipped:
                skipped.append(target.rel)
            elif done.timed_out:
                timeouts.append(target.rel)
            else:
                hit.append(target)
        order = scope.order
        if len(hit) > 1:
            hit.sort(key=lambda t: order.get(t.rel, 0))
        matches: dict[str, tuple[TextMatch, ...]] = {}
        counted = level == COUNT
        limit = self.options.evidence_limit or 0
        total = files = kept = 0
        for target in hit:
            if counted and kept >= limit:
                # Past the evidence shown: only counted (the pass counted every match).
                total += found[target.real].total
                files += 1
                continue
            want = EVERY if counted else FIRST_PER_FILE if level == FIRST else level
            located = self._located(cp, target, want)
            if located is None:
                continue  # changed since the pass found it: no longer a match
            if isinstance(located, Unscannable):
                self._bad[target.real] = located.reason
                continue
            if counted:
                shown = located[: limit - kept]
                kept += len(shown)
                total += len(located)
                files += 1
            else:
                shown = located if level == EVERY else located[:1]
            edit = self._edited(target)
            link = target.rel if edit != target.rel else None
            matches[target.rel] = tuple(
                [TextMatch(edit, ln, col, snip, link) for ln, col, snip in shown]
            )
            if level == FIRST:
                break  # a plain contains needs the first file of its scope that matches
        unscannable = list(scope.unscannable)
        unscannable.extend(
            Unscannable(by_real[real].rel, reason)
            for real, reason in self._bad.items()
            if real in by_real
        )
        return ScanResult(
            files=scope.names,
            matches=matches,
            unscannable=tuple(sorted(unscannable, key=lambda u: u.file)),
            timeouts=tuple(sorted(timeouts)),
            skipped=tuple(sorted(skipped)),
            match_count=total if counted else None,
            matched_files=files if counted else None,
        )

    def _located(
        self, cp: CompiledPattern, target: Target, level: int
    ) -> tuple[_Located, ...] | Unscannable | None:
        """The matches of ``cp`` in ``target`` at ``level`` (a hit the pass did not locate
        is located now, reading the file again: one file per plain ``contains``)."""
        done = self._found[cp.key][target.real]
        if answers(done.level, level):
            return done.matches
        loaded = self._load(target)
        if isinstance(loaded, Unscannable):
            return loaded
        scanned = self._search(cp, loaded, level)
        if scanned is None or scanned.timed_out:
            self._found[cp.key].pop(target.real, None)
            if scanned is not None:
                self._found[cp.key][target.real] = scanned
            return None
        self._put(cp.key, target.real, scanned)
        return scanned.matches

    def announce_module(self, path: str) -> None:
        rel = normalize_relpath(path)
        if not rel:
            return
        target = self._resolver.resolve(rel)
        if isinstance(target, Target) and target.real not in self._modules:
            self._pending_modules[target.real] = target

    def module_index(self, path: str) -> ModuleIndex:
        rel = normalize_relpath(path)
        if rel is None:
            return ModuleIndex(path, problem=f"path {path!r} leaves the root")
        if not rel:
            return ModuleIndex(path, problem=f"path {path!r} is the root directory, not a file")
        target = self._resolver.resolve(rel)
        if target is None:
            return ModuleIndex(rel, missing=True, problem=f"{rel} does not exist")
        if isinstance(target, Unscannable):
            return ModuleIndex(rel, problem=f"cannot read {rel}: {target.reason}")
        if target.real not in self._modules:
            self._pending_modules[target.real] = target
            self.run_pass()
        definitions, problem = self._modules[target.real]
        stars = definitions.get(STAR, ())
        if stars:
            definitions = {k: v for k, v in definitions.items() if k != STAR}
        edit = self._edited(target)
        return ModuleIndex(
            rel,
            definitions=definitions,
            problem=problem,
            star_imports=stars,
            source=edit if edit != rel else None,
        )

    def _edited(self, target: Target) -> str:
        """The root-relative name of the file behind ``target`` (its link target)."""
        real = target.real
        if real.startswith(self._root_real + "/"):
            return real[len(self._root_real) + 1 :]
        return target.rel  # links never leave the root (Resolver); kept for safety

    def resolve_module(self, dotted: str) -> tuple[str | None, Sequence[str]]:
        parts = "/".join(dotted.split("."))
        looked: list[str] = []
        for base in ("", "src/"):
            for candidate in (f"{base}{parts}.py", f"{base}{parts}/__init__.py"):
                looked.append(candidate)
                if self._resolver.resolve(candidate) is not None:
                    return candidate, looked
        return None, looked

    def resolve_cwd(self, cwd: str | None) -> tuple[Path | None, str | None]:
        if cwd is None:
            return self._root, None
        rel = normalize_relpath(cwd)
        if rel is None:
            return None, f"cwd {cwd!r} leaves the root"
        real = (self._root / rel).resolve()
        if not real.is_relative_to(self._root):
            return None, f"cwd {cwd!r} resolves outside the root (refused)"
        if not real.is_dir():
            return None, f"cwd {cwd!r} is not a directory"
        return real, None

    # -- the batched pass ----------------------------------------------------------------

    def run_pass(self) -> None:
        """Run every planned scan and module index: each planned file is read once."""
        # The pass allocates many acyclic objects (syntax trees, evidence): the cyclic
        # collector would rescan every live object again and again, to free nothing.
        enabled = gc.isenabled()
        gc.disable()
        try:
            self._run_pass()
        finally:
            if enabled:
                gc.enable()

    def _run_pass(self) -> None:
        requests, self._pending = self._pending, {}
        modules, self._pending_modules = self._pending_modules, {}
        if not requests and not modules:
            return
        self.stats.passes += 1
        # One plan per scope; the files selected by the same scopes share one merged plan
        # and one matcher: planning costs the requests plus the selected files.
        compiled: dict[_PatternKey, CompiledPattern] = {}
        by_scope: dict[ScopeKey, _Plan] = {}
        for (skey, key, level), cp in requests.items():
            compiled[key] = cp
            plan = by_scope.setdefault(skey, {})
            plan[key] = plan.get(key, 0) | level
        scope_plans = list(by_scope.values())
        skeys = list(by_scope)
        # Files whose scopes the search must know: where a plain contains or a counted
        # absent is located depends on what the files before it in its scope found.
        has_first = any(
            level == FIRST or _counted_only(level)
            for plan in scope_plans
            for level in plan.values()
        )
        file_scopes: dict[str, list[int]] = {}
        targets: dict[str, Target] = {}
        bad = self._bad
        for i, skey in enumerate(by_scope):
            for target in self.scopes.scope(skey).targets:
                real = target.real
                known = file_scopes.get(real)
                if known is None:
                    if real in bad:
                        continue
                    file_scopes[real] = [i]
                    targets[real] = target
                else:
                    known.append(i)
        for real, target in modules.items():
            targets.setdefault(real, target)
        merged: dict[tuple[int, ...], _Plan] = {}
        cache = self.result_cache
        recording = self.reads.log is not None
        plan_ids: dict[int, PlanIds] = {}
        for real in sorted(targets):
            target = targets[real]
            ids = tuple(file_scopes.get(real, ()))
            known_plan = merged.get(ids)
            if known_plan is None:
                known_plan = merged[ids] = self._merge([scope_plans[i] for i in ids])
            plan = known_plan
            if real in self._done:
                plan = {k: v for k, v in plan.items() if not self._is_done(real, k, v)}
            module = real in modules
            if not plan and not module:
                continue
            before = reports.stat_of(real) if cache is not None or recording else None
            stored: Stored | None = None
            ids_of: PlanIds | None = None
            if cache is not None:
                stored = Stored(cache, real, target.rel, self.options, before)
                ids_of = plan_ids.get(id(plan))
                if ids_of is None and plan:
                    ids_of = plan_ids[id(plan)] = PlanIds.of(cache, stored, plan)
                if stored.replay(self, plan, module, ids_of):
                    continue
            loaded = self._load(target, before)
            if isinstance(loaded, Unscannable):
                bad[real] = loaded.reason
                if module:
                    self._modules[real] = ({}, f"cannot read {target.rel}: {loaded.reason}")
                continue
            if stored is not None:
                stored.hashed(self.reads.digest_of_last())
            touched: list[_PatternKey] = []
            if plan:
                first = [(skeys[i], scope_plans[i]) for i in ids] if has_first else ()
                touched = self._search_file(target, plan, compiled, loaded, stored, first)
            self.mark_done(real, plan)
            if module and (stored is None or not stored.reuse_index(self)):
                self.stats.parses[real] += 1
                self._modules[real] = index_source(
                    loaded.text, target.rel, snippet_chars=self.options.snippet_chars
                )
            if stored is not None:
                stored.store(self, touched, ids_of, module)
        self._satisfied.update(requests)
        if cache is not None:
            cache.save()

    @staticmethod
    def _merge(plans: Sequence[_Plan]) -> _Plan:
        if len(plans) == 1:
            return plans[0]
        out: _Plan = {}
        for plan in plans:
            for key, level in plan.items():
                out[key] = out.get(key, 0) | level
        return out

    def _matcher(self, plan: _Plan, compiled: dict[_PatternKey, CompiledPattern]) -> Any:
        # Plans are shared objects (one per group of scopes, never changed once a pass has
        # begun): looked up by identity first, by their keys once per plan.
        known = self._plan_matchers.get(id(plan))
        if known is not None and known[0] is plan:
            return known[1]
        keys = frozenset(plan)
        matcher = self._matchers.get(keys)
        if matcher is None:
            matcher = self._matchers[keys] = CombinedMatcher([compiled[k] for k in keys], self._re2)
        self._plan_matchers[id(plan)] = (plan, matcher)
        return matcher

    def _search_file(
        self,
        target: Target,
        plan: _Plan,
        compiled: dict[_PatternKey, CompiledPattern],
        loaded: _Loaded,
        stored: Stored | None,
        scopes: Sequence[tuple[ScopeKey, _Plan]] = (),
    ) -> list[_PatternKey]:
        """Search one file for every pattern of its plan: the matcher decides what it can;
        a pattern's own search runs where it cannot, or where evidence is needed. Returns
        the patterns the matcher did not rule out (the only ones that may have a result
        kept for this file)."""
        real = target.real
        hits = self._matcher(plan, compiled).hits(loaded.text, loaded.data, loaded.ascii)
        found = self._found
        touched: list[_PatternKey] = []
        for key in hits.sure.union(hits.maybe):
            level = plan.get(key)
            if level is None:
                continue
            touched.append(key)
            if stored is not None and stored.reuse(self, key, level):
                continue
            if level == FIRST and key in hits.sure and not self._leads(target, key, scopes):
                # Whether it matches is all a plain contains needs here: only the first file
                # of its scope that matches is located (here, or when the scan asks).
                self._put(key, real, _FileScan(level=FIRST))
                continue
            if self._timeouts.get(key, 0) >= self.options.max_pattern_timeouts:
                found.setdefault(key, {})[real] = _FileScan(skipped=True)
                continue
            if _counted_only(level) and self._shown_next(key, scopes):
                level = EVERY  # in the evidence shown, as far as the pass can tell
            scanned = self._search(compiled[key], loaded, level)
            if scanned is not None:
                if scanned.timed_out:
                    self._timeouts[key] = self._timeouts.get(key, 0) + 1
                elif level == EVERY:
                    self._spend(key, scopes, len(scanned.matches))
                self._put(key, real, scanned)
            else:
                found.get(key, {}).pop(real, None)
        self.stats.prefilter_skips += len(plan) - len(hits.sure) - len(hits.maybe)
        return touched

    def _leads(
        self, target: Target, key: _PatternKey, scopes: Sequence[tuple[ScopeKey, _Plan]]
    ) -> bool:
        """Whether ``target`` comes before every file found so far to match ``key`` in a
        scope that asks only whether it matches (then its first match is located now, while
        its text is at hand: files are searched in about their scopes' order, so this is
        about one file per scope)."""
        leads = False
        for skey, scope_plan in scopes:
            if scope_plan.get(key) != FIRST:
                continue
            at = self.scopes.scope(skey).order.get(target.rel, 0)
            best = self._first.get((skey, key))
            if best is None or at < best:
                self._first[(skey, key)] = at
                leads = True
        return leads

    def _shown_next(self, key: _PatternKey, scopes: Sequence[tuple[ScopeKey, _Plan]]) -> bool:
        """Whether the matches of counted ``key`` in ``target`` may be among the evidence a
        scope of it shows: its matches are then located now, while its text is at hand.
        Files are searched in about their scopes' order, so this locates about the evidence
        shown; a file the scan needs and the pass did not locate is read again then."""
        limit = self.options.evidence_limit or 0
        kept = self._kept
        for skey, scope_plan in scopes:
            if _counted_only(scope_plan.get(key, 0)) and kept.get((skey, key), 0) < limit:
                return True
        return False

    def _spend(
        self, key: _PatternKey, scopes: Sequence[tuple[ScopeKey, _Plan]], located: int
    ) -> None:
        kept = self._kept
        for skey, scope_plan in scopes:
            if _counted_only(scope_plan.get(key, 0)):
                kept[(skey, key)] = kept.get((skey, key), 0) + located

    def _is_done(self, real: str, key: _PatternKey, level: int) -> bool:
        for plan in self._done.get(real, ()):
            have = plan.get(key)
            if have is not None and answers(have, level):
                return True
        return False

    def mark_done(self, real: str, plan: _Plan) -> None:
        """Note that ``plan`` ran on ``real`` (kept, not copied: a plan is never changed
        once its pass has begun)."""
        if plan:
            self._done.setdefault(real, []).append(plan)

    def _search(self, cp: CompiledPattern, loaded: _Loaded, level: int) -> _FileScan | None:
        """The matches of ``cp`` in one file as ``level`` needs them: the first located
        (``FIRST``, ``FIRST_PER_FILE``), every one counted (``COUNT``: none located), every
        one counted and located (``EVERY``); ``None`` when there is none."""
        self.stats.regex_runs += 1
        text = loaded.text
        if level == COUNT:
            try:
                count = cp.count(
                    text, timeout=self.options.pattern_timeout_s, ascii_bytes=loaded.image(cp)
                )
            except TimeoutError:
                return _FileScan(timed_out=True)
            return _FileScan(level=COUNT, count=count) if count else None
        every = answers(level, COUNT)  # counted: every match is searched for
        try:
            offsets = cp.search(
                text,
                first_only=not every,
                timeout=self.options.pattern_timeout_s,
                ascii_bytes=loaded.image(cp),
            )
        except TimeoutError:
            return _FileScan(timed_out=True)
        if not offsets:
            return None
        if not every:
            return _FileScan(matches=self._locate(text, offsets), level=FIRST_PER_FILE)
        if answers(level, EVERY):
            return _FileScan(matches=self._locate(text, offsets), level=EVERY, count=len(offsets))
        # Counted; the first located too when a scope of this file needs it (match: all).
        first = answers(level, FIRST_PER_FILE)
        located = self._locate(text, offsets[:1]) if first else ()
        return _FileScan(matches=located, level=level | COUNT, count=len(offsets))

    def _put(self, key: _PatternKey, real: str, scan: _FileScan) -> None:
        """Keep ``scan`` as what ``key`` found in ``real``, with what an earlier scan of the
        same file found out beyond it (its count, its located matches)."""
        per_file = self._found.setdefault(key, {})
        old = per_file.get(real)
        if (
            old is not None
            and not (old.timed_out or old.skipped or scan.timed_out or scan.skipped)
            and not answers(scan.level, old.level)
        ):
            scan = _FileScan(
                matches=max(old.matches, scan.matches, key=len),
                level=old.level | scan.level,
                count=max(old.count, scan.count),
            )
        per_file[real] = scan

    def _locate(self, text: str, offsets: Sequence[int]) -> tuple[_Located, ...]:
        out: list[_Located] = []
        line = 1
        last = 0
        limit = self.options.snippet_chars
        self.stats.located += len(offsets)
        for pos in offsets:
            line += text.count("\n", last, pos)
            last = pos
            start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            snippet = text[start : end if end >= 0 else len(text)].rstrip()
            if len(snippet) > limit:
                snippet = snippet[: limit - 1] + "…"
            out.append((line, pos - start + 1, snippet))
        return tuple(out)

    def _load(self, target: Target, before: Any = None) -> _Loaded | Unscannable:
        """Read and decode ``target`` (kept only within ``options.text_cache_bytes``, 0 by
        default: memory holds one file at a time)."""
        reason = self._bad.get(target.real)
        if reason is not None:
            return Unscannable(target.rel, reason)
        kept = self._texts.get(target.real)
        if kept is not None:
            return kept
        self.stats.reads[target.real] += 1
        data = self.reads.read(target, before)
        if isinstance(data, Unscannable):
            return data
        decoded = decode_scan(target.rel, data)
        if isinstance(decoded, str):
            return Unscannable(target.rel, decoded)
        loaded = _Loaded(*decoded)
        size = len(loaded.text) + len(loaded.data)
        if self._text_chars + size <= self.options.text_cache_bytes:
            self._texts[target.real] = loaded
            self._text_chars += size
        return loaded

    def _text(self, target: Target) -> str | Unscannable:
        loaded = self._load(target)
        return loaded if isinstance(loaded, Unscannable) else loaded.text
