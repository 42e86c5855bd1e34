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

Without ``--chimera-spec`` the plugin only registers its markers and options: this package
imports nothing from :mod:`chimera` at import time, and the Spec machinery it imports when
active never reaches LiteLLM, PyGithub or another heavy library.

The hooks and the item classes live here, the module registered as the entry point (pytest
finds a plugin's hooks on that module); the session state is in :mod:`pytest_chimera.state`,
the xdist queue in :mod:`pytest_chimera.workers`, the garbage-collector handling (half of
what the plugin cost over plain tests before it existed) in :mod:`pytest_chimera.heap`.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_chimera import heap
from pytest_chimera.state import (
    DEFAULT_MAX_EVIDENCE,
    STATE_KEY,
    ChimeraState,
    get_state,
    resolved,
)
from pytest_chimera.workers import worker_queue

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from chimera.spec.model import Requirement
    from chimera.spec.results import RequirementResult

__all__ = [
    "DEFAULT_MAX_EVIDENCE",
    "MARKERS",
    "ChimeraState",
    "RequirementItem",
    "SpecYamlFile",
    "get_state",
]

MARKERS: dict[str, str] = {
    "chimera": "a requirement of the Chimera spec (collected by --chimera-spec)",
    "risk_low": "a Chimera requirement with risk: low",
    "risk_medium": "a Chimera requirement with risk: medium",
    "risk_high": "a Chimera requirement with risk: high (its change needs human approval)",
}
"""Markers this plugin registers (``pytest --markers`` lists them)."""


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
        help="neither read nor write any cache under .chimera/cache/ (results, reports, "
        "parsed specs; also: CHIMERA_NO_CACHE=1)",
    )
    group.addoption(
        "--chimera-max-evidence",
        dest="chimera_max_evidence",
        type=int,
        default=DEFAULT_MAX_EVIDENCE,
        metavar="N",
        help=f"evidence locations shown per red requirement (default {DEFAULT_MAX_EVIDENCE})",
    )
    group.addoption(
        "--chimera-no-gc-freeze",
        dest="chimera_no_gc_freeze",
        action="store_true",
        default=False,
        help="leave Python's garbage collector as it is: by default, when the session runs "
        "only Spec items, the objects alive when collection ends are frozen until the "
        "session ends (cheaper collections)",
    )


# --------------------------------------------------------------------------- configure


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # Before the conftests of the rootdir pytest found are imported: a value of one of our
    # options given as its own token may have chosen that rootdir (see setup_check).
    given = (*early_config.invocation_params.args, os.environ.get("PYTEST_ADDOPTS", ""))
    if not any("--chimera-" in arg for arg in given):
        return
    from pytest_chimera.setup_check import misread_setup

    problem = misread_setup(early_config)
    if problem is not None:
        raise pytest.UsageError(problem)


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
    from chimera.spec.discovery import discover_spec_files

    try:
        found = discover_spec_files(requested)
    except ChimeraError as exc:
        raise pytest.UsageError(f"--chimera-spec: {exc}") from exc
    files: list[Path] = []
    for path in found:
        real = resolved(base / path)
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

    try:
        with heap.paused():  # the settings' imports are the Spec machinery's first burst
            from chimera.spec.settings import load_check_settings

            settings = load_check_settings(root)
    except ChimeraError as exc:
        raise pytest.UsageError(f"chimera: {exc}") from exc

    config.stash[STATE_KEY] = ChimeraState(
        spec_files=tuple(files),
        root=resolved(root),
        invocation_dir=base,
        max_evidence=max_evidence,
        settings=settings,
        use_cache=not config.getoption("chimera_no_cache")
        and os.environ.get("CHIMERA_NO_CACHE", "") in ("", "0"),
        freezer=heap.Freezer(enabled=not config.getoption("chimera_no_gc_freeze")),
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
        target = resolved(base / arg.split("::", 1)[0])
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
    if resolved(file_path) not in state.spec_file_set:
        return None
    return SpecYamlFile.from_parent(parent, path=file_path)


class SpecYamlFile(pytest.File):
    """One spec file; collects a :class:`RequirementItem` per requirement, in file order."""

    def collect(self) -> list[RequirementItem]:
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
        with heap.paused():
            items = [
                RequirementItem.from_parent(self, name=req.id, requirement=req)
                for req in state.requirements_for(self.path)
            ]
            state.freezer.freeze()
        return items


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
        state = get_state(self.config)
        assert state is not None
        # The id, not the object: once the session is over the state drops the Spec, and
        # pytest's last garbage collections need not walk thousands of requirements.
        self._state = state
        self.requirement_id = requirement.id
        self.add_marker(_mark("chimera"))
        self.add_marker(_mark(f"risk_{requirement.risk.value}"))
        self.extra_keyword_matches.add(requirement.kind)
        self.user_properties.append(("chimera_kind", requirement.kind))
        self.user_properties.append(("chimera_risk", requirement.risk.value))

    @property
    def requirement(self) -> Requirement:
        """The requirement this item checks."""
        return self._state.requirement(self.requirement_id)

    def runtest(self) -> None:
        result = self._state.result(self.requirement_id)
        if result.status.red:
            raise RequirementFailed(result)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: TracebackStyle | None = None,
    ) -> str | TerminalRepr:
        if not isinstance(excinfo.value, RequirementFailed):
            return super().repr_failure(excinfo, style=style)
        state = self._state
        req = self.requirement
        result = excinfo.value.result
        # The first line is what pytest's short summary shows: the title, else the verdict.
        body = result.render(max_evidence=state.max_evidence)
        if not req.title and body.startswith(result.message):
            # The verdict is already the first line: the evidence follows without repeating it.
            body = body[len(result.message) :].lstrip("\n")
        lines = [
            req.title or result.message,
            f"  requirement: {req.id} ({result.status.value}, risk {req.risk.value}) "
            f"at {state.show_location(req.location)}",
            f"  check:       {req.check.describe()}",
        ]
        if body:
            lines += ["", body]
        return "\n".join(lines)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # 0-based line, so editors and JUnit XML land on the requirement's mapping.
        req = self.requirement
        return (self.path, req.location.line - 1, f"{req.kind}: {self.name}")


# --------------------------------------------------------------------------- session


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Note the selection, find this worker's queue, and freeze the long-lived objects.

    ``trylast``: after every other plugin has looked at the collected items (xdist's worker
    sends them to the controller here), so the freeze also covers what they kept.
    """
    state = get_state(session.config)
    if state is None:
        return
    state.selected = [i.requirement_id for i in session.items if isinstance(i, RequirementItem)]
    if hasattr(session.config, "workerinput"):
        state.upcoming = worker_queue(session, _requirement_id)
    # Only where a Spec was loaded (an xdist controller collects nothing of its own), and
    # only when the Spec is all this session runs: a frozen object is out of reach of the
    # user's own tests' gc.collect(), so a session with Python tests runs unfrozen.
    if any(not isinstance(i, RequirementItem) for i in session.items):
        state.freezer.thaw()
    elif state.loaded:
        state.freezer.freeze()


def _requirement_id(item: pytest.Item) -> str | None:
    return item.requirement_id if isinstance(item, RequirementItem) else None


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Store this session's outcomes in the whole-report cache (when it is on)."""
    state = get_state(session.config)
    if state is not None:
        state.save_reports()


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Release the checking state and thaw the collector before pytest's final collections.

    ``tryfirst``: pytest collects garbage in its own ``pytest_unconfigure`` (to report
    exceptions raised in finalisers); everything must be back in the collector's reach then.
    """
    state = get_state(config)
    if state is not None:
        state.release()
        state.freezer.thaw()


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
