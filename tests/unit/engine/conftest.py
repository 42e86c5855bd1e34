"""Helpers for the check-engine tests: build Specs in code and evaluate them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import pytest

from chimera.spec.drift import DriftSession
from chimera.spec.engine import EngineOptions, EngineStats
from chimera.spec.model import Check, Requirement, SourceLocation, Spec, SpecFile
from chimera.spec.results import DriftReport, RequirementResult

Item = Check | tuple[str, Check] | Requirement


def _make_spec(*checks: Item) -> Spec:
    """A one-file Spec; bare checks get ids r0, r1, ..."""
    reqs: list[Requirement] = []
    for i, item in enumerate(checks):
        if isinstance(item, Requirement):
            reqs.append(item)
            continue
        rid, check = item if isinstance(item, tuple) else (f"r{i}", item)
        reqs.append(Requirement(rid, check, SourceLocation("specs/t.yaml", i + 1, 5)))
    return Spec((SpecFile(Path("specs/t.yaml"), tuple(reqs)),))


# The fixtures' call signatures, for the tests' annotations (imported under TYPE_CHECKING).
class Evaluate(Protocol):
    def __call__(self, root: Path, check: Check, **kwargs: Any) -> RequirementResult: ...


class MakeSpec(Protocol):
    def __call__(self, *checks: Item) -> Spec: ...


class RunAll(Protocol):
    def __call__(
        self, root: Path, checks: Sequence[Item], **kwargs: Any
    ) -> tuple[DriftReport, EngineStats]: ...


@pytest.fixture
def evaluate() -> Evaluate:
    """``evaluate(root, check, **session_kwargs)`` -> the one requirement's result."""

    def run(root: Path, check: Check, **kwargs: Any) -> RequirementResult:
        report = DriftSession(_make_spec(check), root, **kwargs).report()
        assert len(report) == 1
        return report.results[0]

    return run


def _run_all(root: Path, checks: Sequence[Item], **kwargs: Any) -> tuple[DriftReport, EngineStats]:
    stats = EngineStats()
    session = DriftSession(_make_spec(*checks), root, stats=stats, **kwargs)
    return session.report(), stats


@pytest.fixture
def make_spec() -> MakeSpec:
    return _make_spec


@pytest.fixture
def run_all() -> RunAll:
    """``run_all(root, [checks...], **session_kwargs)`` -> (report, stats)."""
    return _run_all


@pytest.fixture
def fast() -> EngineOptions:
    """Options with a short pattern time limit (for backtracking tests)."""
    return EngineOptions(pattern_timeout_s=0.3)
