"""Long work shows its progress: a Rich bar on a terminal, plain lines otherwise; progress
lines are never cut inside a word (issue 38, rows 8 and 9)."""

from __future__ import annotations

import io
import os
import select
import sys
from pathlib import Path

import pytest

from chimera.cli._progress import StepBar, clip, progress_line
from chimera.eval.chain import Chain
from chimera.eval.harness import ArmSettings, run_chain


def test_plain_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()
    with StepBar("continuous inflection-chain", stream=stream) as bar:
        assert not bar.drawn
        bar(0, 3, "on: t01-counted")
        bar(1, 3, "on: t02-plural")
        bar(3, 3, "on: done")
    assert stream.getvalue().splitlines() == [
        "chimera: continuous inflection-chain [0/3] on: t01-counted",
        "chimera: continuous inflection-chain [1/3] on: t02-plural",
        "chimera: continuous inflection-chain [3/3] on: done",
    ]


def test_quiet_shows_nothing() -> None:
    stream = io.StringIO()
    with StepBar("evolve", quiet=True, stream=stream) as bar:
        bar(0, 2, "re-run t01")
    assert stream.getvalue() == ""


def _read_all(fd: int) -> bytes:
    chunks = b""
    while select.select([fd], [], [], 0.2)[0]:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks += data
    return chunks


def test_a_bar_on_a_real_terminal() -> None:
    master, slave = os.openpty()
    with os.fdopen(slave, "w", encoding="utf-8") as terminal:
        with StepBar("meta design", stream=terminal) as bar:
            assert bar.drawn
            bar(0, 4, "general: slug")
            bar(3, 4, "general: title")
        terminal.flush()
        shown = _read_all(master).decode("utf-8", errors="replace")
    os.close(master)
    assert "meta design" in shown
    assert "3/4" in shown and "general: title" in shown
    assert "━" in shown  # the bar itself
    assert "chimera: meta design [" not in shown  # not the plain lines


def test_a_terminal_without_rich_gets_plain_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rich.progress", None)  # an install without the extra
    master, slave = os.openpty()
    with os.fdopen(slave, "w", encoding="utf-8") as terminal:
        with StepBar("evolve", stream=terminal) as bar:
            assert not bar.drawn
            bar(1, 30, "re-run t04-irregular")
        terminal.flush()
        shown = _read_all(master).decode("utf-8")
    os.close(master)
    assert shown.replace("\r", "").strip() == "chimera: evolve [1/30] re-run t04-irregular"


@pytest.mark.slow
def test_a_chain_reports_each_task_as_it_starts(tmp_path: Path) -> None:
    from chimera.eval.ab import CHAINS

    chain = Chain.load(CHAINS / "inflection" / "chain.yaml")
    short = chain.model_copy(update={"tasks": chain.tasks[:1]})
    seen: list[tuple[int, int, str]] = []
    runs = run_chain(
        short,
        tmp_path,
        model="scripted",
        arm=ArmSettings(memory=False),
        label="off",
        progress=lambda done, total, label: seen.append((done, total, label)),
        steps=(12, 14),  # the second arm's first task of fourteen steps
    )
    assert len(runs) == 1
    assert seen == [(12, 14, f"off: {short.tasks[0].id}"), (13, 14, "off: done")]


def test_progress_lines_are_never_cut_inside_a_word() -> None:
    cause = " ".join(f"requirement-{i}-still-red" for i in range(40))
    line = progress_line("attempt", {"number": 2, "verdict": "verify_failed", "cause": cause})
    assert line is not None
    shown = line.split(" — ", 1)[1]
    assert shown.endswith(" …")
    kept = shown.removesuffix(" …").split(" ")
    assert all(word in cause.split(" ") for word in kept)  # whole words only
    assert len(shown) <= 210
    assert clip("short cause") == "short cause"
    assert clip("x" * 300) == "x" * 300  # one word longer than the limit is kept whole


def test_a_failed_steps_line_is_cut_between_words() -> None:
    from chimera.core.agent import StepRecord

    output = " ".join(f"assertion-{i}-failed-in-module" for i in range(30))
    step = StepRecord(
        index=3,
        kind="tools",
        ok=False,
        calls=[{"name": "run_command", "arguments": "{}", "ok": False, "output": output}],
    )
    line = step.describe()
    assert line.startswith("step 3: run_command({}): assertion-0-failed-in-module")
    shown = line.split("): ", 1)[1]
    assert shown.endswith(" …")
    assert all(w in output.split(" ") for w in shown.removesuffix(" …").split(" "))
