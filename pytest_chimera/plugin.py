"""Chimera's pytest plugin: ``pytest --chimera-spec specs/`` checks the Spec beside the tests.

Every requirement of every spec file becomes one pytest item, node id
``<spec file>::<requirement id>``, marked ``chimera`` and ``risk_<risk>``, so ``-m``, ``-k``
and node-id selection work as for ordinary tests. The spec files are added to the collection
arguments, so they are collected whatever ``testpaths`` or the positional arguments say.

Work is lazy: one :class:`~chimera.spec.drift.DriftSession` per session (per xdist
worker) is created at the first requirement that runs and prepared with the ids left after
deselection, so deselected requirements cost nothing and ``--collect-only`` evaluates nothing.

An invalid spec file is a collection error listing ``file:line:col: message`` for every
problem; unlike a broken test module it does not interrupt the session, so the other files'
requirements still run (the session is red either way).

Without ``--chimera-spec`` the plugin only registers its markers and options: this module
imports nothing from :mod:`chimera` at import time, and the Spec machinery it imports when
active never reaches LiteLLM, PyGithub or another heavy library.

Why one module past ~400 lines: pytest finds a plugin's hooks on the module registered as the
entry point, and the hooks, the items and the per-session state reference each other; moving
hooks out would mean registering a second plugin module (what the spec machinery does not
need lives in :mod:`chimera.spec` already).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from chimera.errors import SpecProblem
    from chimera.spec.drift import DriftSession
    from chimera.spec.loader import SpecLoad
    from chimera.spec.model import Requirement, SourceLocation
    from chimera.spec.results import RequirementResult
    from chimera.spec.settings import CheckSettings

MARKERS: dict[str, str] = {
    "chimera": "a requirement of the Chimera spec (collected by --chimera-spec)",
    "risk_low": "a Chimera requirement with risk: low",
    "risk_medium": "a Chimera requirement with risk: medium",
    "risk_high": "a Chimera requirement with risk: high (its change needs human approval)",
}
"""Markers this plugin registers (``pytest --markers`` lists them)."""

DEFAULT_MAX_EVIDENCE = 5
"""Evidence locations shown for a red requirement before "... and N more"."""


# --------------------------------------------------------------------------- options


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("chimera", "Chimera spec (executable requirements)")
    group.addoption(
        "--chimera-spec",
        action="append",
        dest="chimera_spec",
        default=[],
        metavar="PATH",
        help="spec file or directory of *.yaml/*.yml spec files; every requirement becomes "
        "a test item (repeatable)",
    )
    group.addoption(
        "--chimera-root",
        dest="chimera_root",
        default=None,
        metavar="DIR",
        help="directory the spec's paths are relative to and commands run in "
        "(default: pytest's rootdir)",
    )
    group.addoption(
        "--chimera-no-cache",
        dest="chimera_no_cache",
        action="store_true",
        default=False,
        help="neither read nor write the result cache under .chimera/cache/ "
        "(also: CHIMERA_NO_CACHE=1)",
    )
    group.addoption(
        "--chimera-max-evidence",
        dest="chimera_max_evidence",
        type=int,
        default=DEFAULT_MAX_EVIDENCE,
        metavar="N",
        help=f"evidence locations shown per red requirement (default {DEFAULT_MAX_EVIDENCE})",
    )


# --------------------------------------------------------------------------- state


@dataclass
class ChimeraState:
    """Everything the plugin keeps for one session (one per xdist worker).

    Attributes:
        spec_files: the discovered spec files, absolute and resolved, in load order.
        root: the directory the Spec is checked against.
        invocation_dir: where pytest was started (problem paths are shown relative to it).
        max_evidence: evidence locations shown per failure.
        selected: requirement ids left after deselection, in session order.
        invalid_files: spec files reported as collection errors.
    """

    spec_files: tuple[Path, ...]
    root: Path
    invocation_dir: Path
    max_evidence: int = DEFAULT_MAX_EVIDENCE
    settings: CheckSettings | None = None
    use_cache: bool = False
    selected: list[str] = field(default_factory=list)
    invalid_files: int = 0
    _load: SpecLoad | None = None
    _by_file: dict[Path, tuple[Requirement, ...]] = field(default_factory=dict)
    _problems: dict[Path, list[SpecProblem]] = field(default_factory=dict)
    _drift: DriftSession | None = None
    _planned: set[str] = field(default_factory=set)
    upcoming: Callable[[], list[str]] | None = None
    """Under xdist: the ids this worker has been handed and not yet run (else ``None``)."""

    @functools.cached_property
    def spec_file_set(self) -> frozenset[Path]:
        return frozenset(self.spec_files)

    def load(self) -> SpecLoad:
        """Load and validate every spec file once (each file's problems kept apart)."""
        if self._load is None:
            from chimera.spec.loader import load_spec_files
            from chimera.spec.parsecache import ParseCache

            # Spec files parsed before are read back (trusted as the result cache is).
            cache = ParseCache.for_root(self.root) if self.use_cache else None
            loaded = load_spec_files(list(self.spec_files), parse_cache=cache)
            self._by_file = {_resolved(f.path): f.requirements for f in loaded.spec.files}
            self._problems = {
                _resolved(Path(path)): list(problems)
                for path, problems in loaded.problems.items()
                if problems
            }
            self._load = loaded
        return self._load

    def problems_for(self, path: Path) -> list[SpecProblem]:
        self.load()
        return self._problems.get(_resolved(path), [])

    def requirements_for(self, path: Path) -> tuple[Requirement, ...]:
        self.load()
        return self._by_file.get(_resolved(path), ())

    def result(self, requirement_id: str) -> RequirementResult:
        """Evaluate one requirement through the session's single DriftSession.

        The first requirement of a batch plans the work of every requirement known to run
        here, so one pass reads each file once for all of them: the whole selection in a
        serial run, the items this worker holds under xdist (more arrive later; each
        arrival is one more pass, with file texts kept in memory by the engine).
        """
        drift = self._drift
        if drift is None:
            from chimera.spec.drift import DriftSession
            from chimera.spec.engine import EngineOptions
            from chimera.spec.settings import engine_options

            options = engine_options(self.settings) if self.settings else EngineOptions()
            # The user's own tree, like `chimera check`: the result cache is trusted here.
            options = dataclasses.replace(options, result_cache=self.use_cache)
            drift = self._drift = DriftSession(self.load().spec, self.root, options=options)
        if requirement_id not in self._planned:
            batch = self._batch(requirement_id)
            self._planned.update(batch)
            drift.prepare(batch)
        return drift.result(requirement_id)

    def save_reports(self) -> None:
        """Store the outcomes evaluated so far in the report cache (when it is on)."""
        if self._drift is not None:
            self._drift.save()

    @property
    def planned(self) -> frozenset[str]:
        """Requirement ids whose work this session (this xdist worker) has planned."""
        return frozenset(self._planned)

    def _batch(self, requirement_id: str) -> list[str]:
        """The ids to plan with ``requirement_id``: deselected ones never appear."""
        if self.upcoming is None:
            return self.selected or [requirement_id]
        wanted = [requirement_id, *self.upcoming()]
        # A selected dependency is evaluated beside its dependent, as in a serial run, so
        # the "(depends on ..., which failed)" note does not depend on the distribution.
        selected = set(self.selected)
        by_id = self.load().spec.by_id()
        out: dict[str, None] = {}
        while wanted:
            rid = wanted.pop()
            if rid in out or rid in self._planned:
                continue
            out[rid] = None
            req = by_id.get(rid)
            if req is not None:
                wanted.extend(d for d in req.depends_on if d in selected)
        return list(out)

    def show_path(self, file: str | os.PathLike[str]) -> str:
        """``file`` relative to where pytest was started when it lies below it."""
        path = Path(file)
        if not path.is_absolute():
            return path.as_posix()
        try:
            return path.relative_to(self.invocation_dir).as_posix()
        except ValueError:
            return path.as_posix()

    def show_problem(self, problem: SpecProblem) -> str:
        where = self.show_path(problem.file)
        if problem.line:
            return f"{where}:{problem.line}:{problem.col}: {problem.message}"
        return f"{where}: {problem.message}"

    def show_location(self, location: SourceLocation) -> str:
        return f"{self.show_path(location.file)}:{location.line}:{location.col}"


STATE_KEY = pytest.StashKey[ChimeraState]()


def get_state(config: pytest.Config) -> ChimeraState | None:
    """The plugin's state for ``config``, or ``None`` when ``--chimera-spec`` was not given."""
    return config.stash.get(STATE_KEY, None)


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


# --------------------------------------------------------------------------- configure


def pytest_configure(config: pytest.Config) -> None:
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")
    raw: list[str] = config.getoption("chimera_spec") or []
    if not raw:
        return
    base = config.invocation_params.dir
    requested = [base / value for value in raw]
    for value, path in zip(raw, requested, strict=True):
        if not path.exists():
            raise pytest.UsageError(f"--chimera-spec: {value}: no such file or directory")

    from chimera.errors import ChimeraError
    from chimera.spec.loader import discover_spec_files

    try:
        found = discover_spec_files(requested)
    except ChimeraError as exc:
        raise pytest.UsageError(f"--chimera-spec: {exc}") from exc
    files: list[Path] = []
    for path in found:
        real = _resolved(base / path)
        if real not in files:
            files.append(real)
    if not files:
        shown = ", ".join(raw)
        raise pytest.UsageError(f"--chimera-spec: no spec files (*.yaml, *.yml) in {shown}")

    root_opt: str | None = config.getoption("chimera_root")
    root = (base / root_opt) if root_opt else config.rootpath
    if not root.is_dir():
        raise pytest.UsageError(f"--chimera-root: {root_opt}: not a directory")
    max_evidence: int = config.getoption("chimera_max_evidence")
    if max_evidence < 1:
        raise pytest.UsageError("--chimera-max-evidence: must be at least 1")

    from chimera.spec.settings import load_check_settings

    try:
        settings = load_check_settings(root)
    except ChimeraError as exc:
        raise pytest.UsageError(f"chimera: {exc}") from exc

    config.stash[STATE_KEY] = ChimeraState(
        spec_files=tuple(files),
        root=_resolved(root),
        invocation_dir=base,
        max_evidence=max_evidence,
        settings=settings,
        use_cache=not config.getoption("chimera_no_cache")
        and os.environ.get("CHIMERA_NO_CACHE", "") in ("", "0"),
    )
    _add_collection_args(config, files)


def _add_collection_args(config: pytest.Config, files: Iterable[Path]) -> None:
    """Append the spec files to the collection arguments, unless the user selected some.

    An argument naming a spec file (``specs/a.yaml`` or ``specs/a.yaml::some-id``) is an
    explicit selection, as for any test file: then no other spec file is added. Otherwise
    every spec file a directory argument does not already reach is appended, so the Spec
    runs beside the tests whatever ``testpaths`` says. xdist workers run this hook again
    and find the files already present.
    """
    base = config.invocation_params.dir
    spec_files = list(files)
    named: set[Path] = set()
    dirs: list[Path] = []
    for arg in config.args:
        target = _resolved(base / arg.split("::", 1)[0])
        if target.is_dir():
            dirs.append(target)
        else:
            named.add(target)
    if named.intersection(spec_files):
        return
    for path in spec_files:
        if not any(path.is_relative_to(d) for d in dirs):
            config.args.append(str(path))


# --------------------------------------------------------------------------- collection


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> SpecYamlFile | None:
    state = get_state(parent.config)
    if state is None or file_path.suffix not in (".yaml", ".yml"):
        return None
    if _resolved(file_path) not in state.spec_file_set:
        return None
    return SpecYamlFile.from_parent(parent, path=file_path)


class SpecYamlFile(pytest.File):
    """One spec file; collects a :class:`RequirementItem` per requirement, in file order."""

    def collect(self) -> Iterator[RequirementItem]:
        state = get_state(self.config)
        assert state is not None
        try:
            problems = state.problems_for(self.path)
        except Exception as exc:
            from chimera.errors import ChimeraError

            if not isinstance(exc, ChimeraError):
                raise
            # e.g. a kind plugin that fails to register: every spec file reports it.
            state.invalid_files += 1
            raise self.CollectError(f"cannot load the spec: {exc}") from exc
        if problems:
            state.invalid_files += 1
            lines = [state.show_problem(p) for p in problems]
            count = f"{len(lines)} problem{'s' if len(lines) != 1 else ''}"
            raise self.CollectError(f"invalid spec file ({count}):\n" + "\n".join(lines))
        for requirement in state.requirements_for(self.path):
            yield RequirementItem.from_parent(self, name=requirement.id, requirement=requirement)


_MARKS: dict[str, pytest.MarkDecorator] = {}


def _mark(name: str) -> pytest.MarkDecorator:
    """The decorator of marker ``name``, looked up once: ``pytest.mark``'s lookup validates the
    name each time, a cost every one of thousands of items would pay again."""
    found = _MARKS.get(name)
    if found is None:
        found = _MARKS[name] = getattr(pytest.mark, name)
    return found


class RequirementFailed(Exception):
    """Raised by :meth:`RequirementItem.runtest` when the requirement is red."""

    def __init__(self, result: RequirementResult) -> None:
        super().__init__(result.message)
        self.result = result


class RequirementItem(pytest.Item):
    """One requirement of the Spec as a pytest item.

    Marked ``chimera`` and ``risk_<risk>``; the kind name (``defines``, ``contains``...) is an
    extra ``-k`` keyword. JUnit XML gets ``chimera_kind`` and ``chimera_risk`` properties.
    """

    def __init__(self, *, requirement: Requirement, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.requirement = requirement
        self.add_marker(_mark("chimera"))
        self.add_marker(_mark(f"risk_{requirement.risk.value}"))
        self.extra_keyword_matches.add(requirement.kind)
        self.user_properties.append(("chimera_kind", requirement.kind))
        self.user_properties.append(("chimera_risk", requirement.risk.value))

    def runtest(self) -> None:
        state = get_state(self.config)
        assert state is not None
        result = state.result(self.requirement.id)
        if result.status.red:
            raise RequirementFailed(result)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: TracebackStyle | None = None,
    ) -> str | TerminalRepr:
        if not isinstance(excinfo.value, RequirementFailed):
            return super().repr_failure(excinfo, style=style)
        state = get_state(self.config)
        assert state is not None
        req = self.requirement
        result = excinfo.value.result
        # The first line is what pytest's short summary shows: the title, else the verdict.
        lines = [
            req.title or result.message,
            f"  requirement: {req.id} ({result.status.value}, risk {req.risk.value}) "
            f"at {state.show_location(req.location)}",
            f"  check:       {req.check.describe()}",
            "",
            result.render(max_evidence=state.max_evidence),
        ]
        return "\n".join(lines)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # 0-based line, so editors and JUnit XML land on the requirement's mapping.
        return (
            self.path,
            self.requirement.location.line - 1,
            f"{self.requirement.kind}: {self.name}",
        )


# --------------------------------------------------------------------------- session


def pytest_collection_finish(session: pytest.Session) -> None:
    state = get_state(session.config)
    if state is None:
        return
    state.selected = [i.requirement.id for i in session.items if isinstance(i, RequirementItem)]
    if hasattr(session.config, "workerinput"):
        state.upcoming = _worker_queue(session)


def _worker_queue(session: pytest.Session) -> Callable[[], list[str]] | None:
    """Under xdist, a view of the requirement ids queued for this worker.

    Every worker collects every item but runs only those the controller sends it; reading
    the worker's queue lets a worker check only its own. The queue is xdist's internal
    state (``WorkerInteractor.torun``, a deque of item indices behind a lock); when it is
    not found as expected, ``None`` keeps the serial behaviour (plan the whole selection)
    — slower, never wrong.
    """
    interactor = next(
        (
            p
            for p in session.config.pluginmanager.get_plugins()
            if hasattr(p, "torun") and hasattr(p, "nextitem_index")
        ),
        None,
    )
    lock = getattr(getattr(interactor, "torun", None), "lock", None)
    if interactor is None or not callable(lock):
        return None
    items = session.items

    def upcoming() -> list[str]:
        indices: list[object] = [getattr(interactor, "nextitem_index", None)]
        with lock() as queued:
            indices.extend(queued)
        out: list[str] = []
        for index in indices:
            if isinstance(index, int) and 0 <= index < len(items):
                item = items[index]
                if isinstance(item, RequirementItem):
                    out.append(item.requirement.id)
        return out

    return upcoming


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Store this session's outcomes in the whole-report cache (when it is on)."""
    state = get_state(session.config)
    if state is not None:
        state.save_reports()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """Keep invalid spec files from interrupting the session.

    pytest stops before running anything when collection had errors; a broken spec file must
    not hide the verdict of the other files' requirements, so its errors are left out of that
    decision (and counted again afterwards, so the exit status stays red). Errors of ordinary
    test modules, and ``--maxfail`` reached during collection, still stop the session.
    """
    state = get_state(session.config)
    hidden = 0
    if state is not None and not session.shouldfail:
        hidden = min(state.invalid_files, session.testsfailed)
    session.testsfailed -= hidden
    try:
        return (yield)
    finally:
        session.testsfailed += hidden
