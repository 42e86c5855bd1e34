"""The engine session: plans every announced scan, then reads each file once.

Kinds announce work (``announce_scan`` / ``announce_module``) from their ``prepare()``; the
first ``scan()`` or ``module_index()`` that needs a result runs one batched pass over the
union of the planned files. For each file the pass reads and decodes it once, runs one
Aho-Corasick pass for the required literals of every planned pattern at the same time, runs
each pattern's real regex (with its own time limit) only where its literals occur, and indexes
it for ``defines`` if asked — so the cost of a run is close to the cost of reading the
selected files once, however many requirements share them. Work asked for without an
announcement is planned on the spot and served from the text cache when possible.

Why one module past ~400 lines: the batched pass (plan, search, locate, mark done) reads and
writes one per-run plan state; scope selection and read recording already live in mixins
(:mod:`.scopes`, :mod:`.recording`), and splitting the pass would only spread that state.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import Any

from chimera.runner import CommandRunner
from chimera.spec.context import (
    Definition,
    MatchNeed,
    ModuleIndex,
    ScanRequest,
    ScanResult,
    TextMatch,
    Unscannable,
)
from chimera.spec.engine.cache import ResultCache
from chimera.spec.engine.files import (
    FileTree,
    ReadBytes,
    Resolver,
    Target,
    load_text,
    normalize_relpath,
    read_bytes,
)
from chimera.spec.engine.linear import AsciiImages
from chimera.spec.engine.options import EngineOptions, EngineStats
from chimera.spec.engine.patterns import CompiledPattern, PatternCache
from chimera.spec.engine.prefilter import _has_all, _make_prefilter, _PatternKey
from chimera.spec.engine.prefilter import _Prefilter as _Prefilter  # tests patch it in here
from chimera.spec.engine.pyindex import STAR, index_source
from chimera.spec.engine.recording import ReadRecording
from chimera.spec.engine.scopes import ScopeSelection, _Scope, _scope_key, _ScopeKey
from chimera.spec.engine.stored import FileScan as _FileScan
from chimera.spec.engine.stored import Stored

_Located = tuple[int, int, str]
_Plan = dict[_PatternKey, bool]


class EngineSession(ReadRecording, ScopeSelection):
    """Implements :class:`chimera.spec.context.CheckContext` for one root.

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
        self._patterns = PatternCache(self.options, self.stats)
        self._scopes: dict[_ScopeKey, _Scope] = {}
        self._texts: dict[str, str] = {}
        self._text_chars = 0
        self._bad: dict[str, str] = {}
        self._modules: dict[str, tuple[dict[str, tuple[Definition, ...]], str | None]] = {}
        # Requests: planned (not yet run) and satisfied (scope key, pattern key, every match).
        self._pending: dict[tuple[_ScopeKey, _PatternKey, bool], CompiledPattern] = {}
        self._satisfied: set[tuple[_ScopeKey, _PatternKey, bool]] = set()
        self._pending_modules: dict[str, Target] = {}
        # Per real file: the plans run on it (pattern key -> searched for every match?).
        self._done: dict[str, list[_Plan]] = {}
        # Per pattern key: the files where it matched or timed out.
        self._found: dict[_PatternKey, dict[str, _FileScan]] = {}
        self._timeouts: dict[_PatternKey, int] = {}
        self._read_log: dict[str, list[Any]] | None = None
        self.result_cache: ResultCache | None = None
        """The result cache (``options.result_cache``), unless refused (``cache_refusal``)."""
        self.cache_refusal: str | None = None
        if self.options.result_cache and reader is None:
            cache = ResultCache(self._root_real, max_bytes=self.options.cache_max_bytes)
            if cache.disabled is None:
                self.result_cache = cache
            else:
                self.cache_refusal = cache.disabled

    # -- CheckContext -------------------------------------------------------------------

    @property
    def root(self) -> Path:
        return self._root

    @property
    def runner(self) -> CommandRunner:
        return self._runner

    def _is_satisfied(self, skey: _ScopeKey, key: _PatternKey, need_all: bool) -> bool:
        return (skey, key, True) in self._satisfied or (
            not need_all and (skey, key, False) in self._satisfied
        )

    def announce_scan(self, request: ScanRequest) -> None:
        cp = self._patterns.get(request.pattern, request.regex)
        if cp.error is not None:
            return
        skey = _scope_key(request)
        scope = self._scope(skey)
        if scope.error is not None or scope.missing is not None:
            return
        need_all = request.need is MatchNeed.ALL
        if not self._is_satisfied(skey, cp.key, need_all):
            self._pending[(skey, cp.key, need_all)] = cp

    def scan(self, request: ScanRequest) -> ScanResult:
        cp = self._patterns.get(request.pattern, request.regex)
        if cp.error is not None:
            return ScanResult(error=cp.error)
        skey = _scope_key(request)
        scope = self._scope(skey)
        if scope.error is not None:
            return ScanResult(error=scope.error)
        if scope.missing is not None:
            return ScanResult(missing=scope.missing, unscannable=scope.unscannable)
        need_all = request.need is MatchNeed.ALL
        if not self._is_satisfied(skey, cp.key, need_all):
            self._pending[(skey, cp.key, need_all)] = cp
            self.run_pass()
        by_real = scope.by_real
        matches: dict[str, tuple[TextMatch, ...]] = {}
        timeouts: list[str] = []
        skipped: list[str] = []
        for real, done in self._found.get(cp.key, {}).items():
            target = by_real.get(real)
            if target is None or real in self._bad:
                continue
            if done.skipped:
                skipped.append(target.rel)
                continue
            if done.timed_out:
                timeouts.append(target.rel)
                continue
            found = done.matches if need_all else done.matches[:1]
            edit = self._edited(target)
            link = target.rel if edit != target.rel else None
            matches[target.rel] = tuple(
                [TextMatch(edit, ln, col, snip, link) for ln, col, snip in found]
            )
        unscannable = list(scope.unscannable)
        unscannable.extend(
            Unscannable(by_real[real].rel, reason)
            for real, reason in self._bad.items()
            if real in by_real
        )
        order = scope.order if len(matches) > 1 else {}
        return ScanResult(
            files=scope.names,
            matches=dict(sorted(matches.items(), key=lambda kv: order.get(kv[0], 0))),
            unscannable=tuple(sorted(unscannable, key=lambda u: u.file)),
            timeouts=tuple(sorted(timeouts)),
            skipped=tuple(sorted(skipped)),
        )

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
        # One plan per scope (pattern key -> every match?), shared by the files it selects:
        # planning costs the number of requests plus the number of selected files.
        targets: dict[str, Target] = {}
        by_scope: dict[_ScopeKey, tuple[_Plan, _Plan]] = {}
        compiled: dict[_PatternKey, CompiledPattern] = {}
        by_literal: dict[str, set[_PatternKey]] = {}
        others: set[str] = set()
        for (skey, key, need_all), cp in requests.items():
            compiled[key] = cp
            # The automaton looks for each pattern's best set; the others are checked with a
            # substring search only where that one hit (cheaper than a bigger automaton).
            if cp.literal_sets:
                for literal in cp.literal_sets[0]:
                    by_literal.setdefault(literal, set()).add(key)
                for need in cp.literal_sets[1:]:
                    others.update(need)
            with_lit, without_lit = by_scope.setdefault(skey, ({}, {}))
            plan = with_lit if cp.literals is not None else without_lit
            if need_all or key not in plan:
                plan[key] = need_all
        file_plans: dict[str, list[tuple[_Plan, _Plan]]] = {}
        for skey, plans in by_scope.items():
            for target in self._scopes[skey].targets:
                real = target.real
                if real in self._bad:
                    continue
                known = file_plans.get(real)
                if known is None:
                    file_plans[real] = [plans]
                    targets[real] = target
                else:
                    known.append(plans)
        for real, target in modules.items():
            targets.setdefault(real, target)
        prefilter = _make_prefilter(by_literal, others) if by_literal else None
        cache = self.result_cache
        timeout = self.options.pattern_timeout_s
        for real in sorted(targets):
            target = targets[real]
            lit, nolit = self._file_plan(real, file_plans.get(real, ()))
            if lit is None and nolit is None and real not in modules:
                continue
            stored: Stored | None = None
            if cache is not None:
                stored = Stored(cache, real, target.rel, self.options)
                if stored.replay(self, lit, nolit, real in modules):
                    continue
            text = self._text(target)
            if isinstance(text, Unscannable):
                if real in modules:
                    self._modules[real] = ({}, f"cannot read {target.rel}: {text.reason}")
                continue
            if stored is not None:
                stored.hashed(text)
            run: list[tuple[_PatternKey, bool]] = list(nolit.items()) if nolit else []
            if lit:
                assert prefilter is not None
                present = prefilter.hits(text)
                exact = prefilter.exact
                # The patterns behind the literals found, gathered in C (no loop per hit).
                candidates = set(chain.from_iterable(map(prefilter.keys.__getitem__, present)))
                seen: dict[str, bool] = {}
                for key in candidates:
                    wanted = lit.get(key)
                    if wanted is None:
                        continue
                    sets = compiled[key].literal_sets
                    if len(sets) < 2 or _has_all(sets, text, seen, present, exact):
                        run.append((key, wanted))
                self.stats.prefilter_skips += len(lit) - (len(run) - len(nolit or ()))
            # ASCII text lets the linear engine answer "no match" without ``regex``; other
            # text, through an ASCII image with the same matches (per pattern's stand-ins).
            data: bytes | None = None
            images: AsciiImages | None = None
            if run:
                if text.isascii():
                    data = text.encode("ascii")
                else:
                    images = AsciiImages(text)
            for key, need_all in run:
                if stored is not None and stored.reuse(self, key, need_all):
                    continue
                if self._timeouts.get(key, 0) >= self.options.max_pattern_timeouts:
                    self._found.setdefault(key, {})[real] = _FileScan(skipped=True)
                    continue
                cp = compiled[key]
                image = data
                if images is not None and cp.stand_ins is not None:
                    image = images.image(cp.stand_ins)
                scanned = self._search(cp, text, need_all, timeout, image)
                if scanned is not None and scanned.timed_out:
                    self._timeouts[key] = self._timeouts.get(key, 0) + 1
                if scanned is not None:
                    self._found.setdefault(key, {})[real] = scanned
                else:
                    self._found.get(key, {}).pop(real, None)
            self.mark_done(real, lit, nolit)
            if real in modules and (stored is None or not stored.reuse_index(self)):
                self.stats.parses[real] += 1
                self._modules[real] = index_source(
                    text, target.rel, snippet_chars=self.options.snippet_chars
                )
            if stored is not None:
                stored.store(self, lit, nolit, real in modules)
        self._satisfied.update(requests)
        if cache is not None:
            cache.save()

    def _file_plan(
        self, real: str, plans: Sequence[tuple[_Plan, _Plan]]
    ) -> tuple[_Plan | None, _Plan | None]:
        """The patterns to search in ``real`` (with / without literals), less those an
        earlier pass already searched there; ``None`` for none."""
        done = self._done.get(real)
        if len(plans) == 1 and not done:
            lit, nolit = plans[0]
            return lit or None, nolit or None
        merged: tuple[_Plan, _Plan] = ({}, {})
        for plan in plans:
            for source, into in zip(plan, merged, strict=True):
                for key, need_all in source.items():
                    if need_all or key not in into:
                        into[key] = need_all
        if done:
            for into in merged:
                for key in [k for k, every in into.items() if self._is_done(real, k, every)]:
                    del into[key]
        return merged[0] or None, merged[1] or None

    def _is_done(self, real: str, key: _PatternKey, need_all: bool) -> bool:
        for plan in self._done.get(real, ()):
            every = plan.get(key)
            if every is not None and (every or not need_all):
                return True
        return False

    def mark_done(self, real: str, lit: _Plan | None, nolit: _Plan | None) -> None:
        """Note that the plans ``lit`` and ``nolit`` ran on ``real`` (kept, not copied: a
        plan is never changed once its pass has begun)."""
        for plan in (lit, nolit):
            if plan:
                self._done.setdefault(real, []).append(plan)

    def _search(
        self,
        cp: CompiledPattern,
        text: str,
        need_all: bool,
        timeout: float,
        ascii_bytes: bytes | None = None,
    ) -> _FileScan | None:
        self.stats.regex_runs += 1
        try:
            offsets = cp.search(
                text, first_only=not need_all, timeout=timeout, ascii_bytes=ascii_bytes
            )
        except TimeoutError:
            return _FileScan(timed_out=True)
        if not offsets:
            return None
        return _FileScan(matches=self._locate(text, offsets))

    def _locate(self, text: str, offsets: Sequence[int]) -> tuple[_Located, ...]:
        out: list[_Located] = []
        line = 1
        last = 0
        limit = self.options.snippet_chars
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

    def _text(self, target: Target) -> str | Unscannable:
        cached = self._texts.get(target.real)
        if cached is not None:
            return cached
        reason = self._bad.get(target.real)
        if reason is not None:
            return Unscannable(target.rel, reason)
        loaded = load_text(target, self.options, self.stats, self._reader)
        if isinstance(loaded, Unscannable):
            self._bad[target.real] = loaded.reason
            return loaded
        if self._text_chars + len(loaded) <= self.options.text_cache_bytes:
            self._texts[target.real] = loaded
            self._text_chars += len(loaded)
        return loaded
