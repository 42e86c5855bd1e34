"""Deselected requirements do no work; one DriftSession per session, prepared after
deselection; without the option nothing from the Spec machinery runs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from chimera.spec import drift

LAZY = """\
requirements:
  - id: touch-a
    command: {run: 'touch ran-a', timeout: 30}
  - id: touch-b
    risk: high
    command: {run: 'touch ran-b', timeout: 30}
  - id: has-app
    contains: {path: README.md, pattern: app}
"""


@pytest.fixture
def lazy(project: pytest.Pytester) -> pytest.Pytester:
    (project.path / "specs" / "lazy.yaml").write_text(LAZY, encoding="utf-8")
    return project


@pytest.fixture
def drift_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Record DriftSession construction and prepare() calls of in-process runs."""
    calls: list[tuple[str, Any]] = []
    original_init = drift.DriftSession.__init__
    original_prepare = drift.DriftSession.prepare

    def init(self: drift.DriftSession, *args: Any, **kwargs: Any) -> None:
        calls.append(("init", None))
        original_init(self, *args, **kwargs)

    def prepare(self: drift.DriftSession, ids: Iterable[str]) -> None:
        ids = list(ids)
        calls.append(("prepare", ids))
        original_prepare(self, ids)

    monkeypatch.setattr(drift.DriftSession, "__init__", init)
    monkeypatch.setattr(drift.DriftSession, "prepare", prepare)
    return calls


def ran(pytester: pytest.Pytester) -> set[str]:
    return {p.name for p in pytester.path.glob("ran-*")}


def test_collect_only_evaluates_nothing(lazy: pytest.Pytester, drift_calls: list[Any]) -> None:
    result = lazy.runpytest("--chimera-spec", "specs", "--co")
    assert result.ret == 0
    assert ran(lazy) == set()
    assert drift_calls == []


def test_deselected_by_keyword_do_no_work(lazy: pytest.Pytester, drift_calls: list[Any]) -> None:
    result = lazy.runpytest("--chimera-spec", "specs", "-k", "touch-a or has-app")
    result.assert_outcomes(passed=2, deselected=7)
    assert ran(lazy) == {"ran-a"}
    assert drift_calls == [("init", None), ("prepare", ["touch-a", "has-app"])]


def test_deselected_by_marker_do_no_work(lazy: pytest.Pytester, drift_calls: list[Any]) -> None:
    result = lazy.runpytest("--chimera-spec", "specs", "-m", "risk_high")
    result.assert_outcomes(passed=1, failed=1, deselected=7)  # no-todo (risk high) is red
    assert ran(lazy) == {"ran-b"}
    assert drift_calls == [("init", None), ("prepare", ["no-todo", "touch-b"])]


def test_not_chimera_creates_no_session(lazy: pytest.Pytester, drift_calls: list[Any]) -> None:
    result = lazy.runpytest("--chimera-spec", "specs", "-m", "not chimera")
    result.assert_outcomes(passed=2, deselected=7)
    assert ran(lazy) == set()
    assert drift_calls == []


def test_node_id_selection_does_no_other_work(
    lazy: pytest.Pytester, drift_calls: list[Any]
) -> None:
    result = lazy.runpytest("specs/lazy.yaml::touch-b", "--chimera-spec", "specs")
    result.assert_outcomes(passed=1)
    assert ran(lazy) == {"ran-b"}
    assert drift_calls == [("init", None), ("prepare", ["touch-b"])]


def test_one_session_for_every_item(lazy: pytest.Pytester, drift_calls: list[Any]) -> None:
    result = lazy.runpytest("--chimera-spec", "specs", "-m", "chimera")
    result.assert_outcomes(passed=5, failed=2, deselected=2)
    assert ran(lazy) == {"ran-a", "ran-b"}
    assert [c for c in drift_calls if c[0] == "init"] == [("init", None)]
    assert drift_calls[1] == (
        "prepare",
        [
            "widget-class",
            "widget-render",
            "no-todo",
            "readme-install",
            "touch-a",
            "touch-b",
            "has-app",
        ],
    )


def test_without_option_nothing_is_loaded(project: pytest.Pytester, drift_calls: list[Any]) -> None:
    result = project.runpytest()
    result.assert_outcomes(passed=2)
    assert drift_calls == []
