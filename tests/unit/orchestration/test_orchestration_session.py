"""The session factory: every surface reaches it, its parts are shared, its seam works, and a
project run checks and loads the Spec only where a verdict needs it (counted per card)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from chimera.cli import main
from chimera.cli.demo import DEMO_DIR, write_project
from chimera.config import ChimeraConfig
from chimera.config.check import CheckSettings
from chimera.core.deps import AgentDeps
from chimera.errors import UsageError
from chimera.governance.wiring import trusted_commands
from chimera.memory.experience import ExperienceBuffer
from chimera.orchestration.adapters import GuardSnapshots
from chimera.orchestration.session_factory import Session, SessionFactory
from chimera.orchestration.state import RunState, RunStore, now_iso
from chimera.orchestration.surfaces import ResumeRequest, RunRequest, approve_run, start_run
from chimera.spec import drift, loader
from chimera.spec.loader import load_spec

SCRIPT = f"scripted:{DEMO_DIR / 'script.yaml'}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "ledger"
    root.mkdir()
    write_project(root)
    return root


class Reached(UsageError):
    """Raised by the patched factory: the surface got as far as building a session."""


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "add a balance column", "--model", SCRIPT],
        ["run", "--model", SCRIPT, "--force"],
        ["resume", "r0"],
        ["approve", "r0", "--by", "bob"],
        ["ask", "what does the ledger do?", "--model", SCRIPT],
        ["demo", "--quiet"],
    ],
    ids=lambda argv: argv[0],
)
def test_every_surface_builds_its_session_through_the_factory(
    argv: list[str],
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    def reached(self: SessionFactory, *args: Any, **kwargs: Any) -> Any:
        raise Reached(f"factory reached by {argv[0]}")

    monkeypatch.setattr(SessionFactory, "prepare", reached)
    monkeypatch.setattr(SessionFactory, "open_record", reached)
    RunStore(project).save(
        RunState(
            run_id="r0",
            created_at=now_iso(),
            updated_at=now_iso(),
            started_by="alice",
            spec_paths=["specs"],
            model=SCRIPT,
        )
    )
    where = ["--dir", str(tmp_path / "demo")] if argv[0] == "demo" else ["--root", str(project)]
    assert main([*argv, *where]) == 2
    assert f"factory reached by {argv[0]}" in capsys.readouterr().err


class Part:
    """A package plugging into the factory: it sees the session and swaps the experience store."""

    def __init__(self, store: ExperienceBuffer) -> None:
        self.store = store
        self.attached: list[Session] = []

    def attach(self, session: Session) -> None:
        self.attached.append(session)

    def agent_deps(self, deps: AgentDeps, session: Session) -> AgentDeps:
        assert session in self.attached
        return dataclasses.replace(deps, experience=self.store)


def test_session_parts_plug_in_and_one_guard_serves_the_snapshot_folder(
    project: Path, tmp_path: Path
) -> None:
    part = Part(ExperienceBuffer(tmp_path / "experience.jsonl"))
    factory = SessionFactory([part])
    session = factory.open(factory.prepare(project, ChimeraConfig(), SCRIPT), run_id="r1")
    assert part.attached == [session]
    spec = load_spec([project / "specs"])
    agent, _ = session.agent(
        spec, task="t", untrusted=True, trusted_commands=trusted_commands(spec)
    )
    assert agent.ctx.experience is part.store  # what the planner reads and writes
    assert agent.deps.guard is session.guard
    assert agent.runner is session.sandbox
    assert agent.tool_wrapper is not None  # untrusted implies the TrustKernel around the tools
    assert session.guard.store == (project / ".chimera/runs/r1/snapshots").resolve()
    orchestrator, solver = session.project(["specs"])
    assert isinstance(orchestrator.kit.snapshots, GuardSnapshots)
    assert orchestrator.kit.snapshots.guard is session.guard
    assert solver.build_agent == session.agent


def test_a_project_run_checks_and_loads_the_spec_only_where_a_verdict_needs_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Counter[str]()
    load_files, report = loader.load_spec_files, drift.DriftSession.report

    def counting_load(*args: Any, **kwargs: Any) -> Any:
        real["load_spec"] += 1
        return load_files(*args, **kwargs)

    def counting_report(self: drift.DriftSession, only: Any = None) -> Any:
        real["check_drift"] += 1
        return report(self, only)

    monkeypatch.setattr(loader, "load_spec_files", counting_load)
    monkeypatch.setattr(drift.DriftSession, "report", counting_report)

    # One window per card: from the previous card's end (or the goal) to this card's end.
    windows: list[dict[str, Any]] = []
    window: dict[str, Any] = {}

    def watch(event: str, fields: dict[str, Any]) -> None:
        nonlocal window
        if event in ("goal", "approved"):
            window = {"at": Counter(real), "events": Counter[str]()}
        if not window:
            return
        if event == "check":
            window["events"]["base" if fields["phase"] == "base" else "verify"] += 1
        else:
            window["events"][event] += 1
        if event == "card_finished":
            window["real"] = Counter(real)
            window["real"].subtract(window["at"])
            windows.append(window)
            window = {"at": Counter(real), "events": Counter[str]()}

    config = ChimeraConfig()
    started = start_run(
        RunRequest(root=project, config=config, model=SCRIPT, started_by="alice", events=watch)
    )
    assert started.state.status.value == "awaiting_approval"
    again = ResumeRequest(
        root=project, config=config, run_id=started.state.run_id, model=SCRIPT, events=watch
    )
    done = approve_run(again, by="bob")
    assert done.state.status.value == "done"

    solved = [w for w in windows if w["events"]["card_solved"]]
    assert solved, "the demo solves cards"
    for w in solved:
        ev, calls = w["events"], w["real"]
        # The agent received the orchestrator's report: it records a base, runs none.
        assert ev["base"] == 1
        assert calls["check_drift"] == ev["check_drift"] + ev["verify"]
        # Before the card (its report is the agent's base), each attempt, the acceptance.
        assert calls["check_drift"] <= 2 + ev["attempt"]
        # The spec files did not change: the Spec is not parsed again for the card.
        assert calls["load_spec"] == 0
    # One parse per session (the start's and the approval's); every card reuses it.
    assert real["load_spec"] == 2


def test_the_check_settings_reach_every_check_of_a_run(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # [tool.chimera.check] applies to a run's checks as it does to `chimera check`: the
    # orchestrator's (base, before each card, acceptance) and each card agent's (verify).
    seen: list[tuple[int, float]] = []
    init = drift.DriftSession.__init__

    def recording(self: drift.DriftSession, *args: Any, **kwargs: Any) -> None:
        options = kwargs.get("options")
        seen.append(
            (-1, -1.0) if options is None else (options.max_file_bytes, options.pattern_timeout_s)
        )
        init(self, *args, **kwargs)

    monkeypatch.setattr(drift.DriftSession, "__init__", recording)
    config = ChimeraConfig(check=CheckSettings(max_file_bytes=1_000_000, regex_timeout=3.0))
    checks: Counter[str] = Counter()

    def watch(event: str, fields: dict[str, Any]) -> None:
        if event == "check":
            checks["agent"] += 1
        elif event == "check_drift":
            checks["orchestrator"] += 1

    start_run(
        RunRequest(root=project, config=config, model=SCRIPT, started_by="alice", events=watch)
    )
    assert checks["agent"] and checks["orchestrator"]
    assert seen and set(seen) == {(1_000_000, 3.0)}
