"""The run switches pick the default session parts: ``--no-reflection`` leaves out the
ReflectionPart and nothing else, on every run surface, and the eval harness passes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.cli import build_parser
from chimera.cli._switches import part_switches
from chimera.config import ChimeraConfig
from chimera.eval.harness import ArmSettings
from chimera.orchestration.parts import default_factory, default_parts


def _names(root: Path, **switches: bool) -> list[str]:
    return [type(p).__name__ for p in default_parts(ChimeraConfig(), root=root, **switches)]


def test_no_reflection_removes_only_the_reflection_part(tmp_path: Path) -> None:
    full = _names(tmp_path)
    assert full == ["MemoryPart", "EvolutionPart", "ReflectionPart", "CrewsPart"]
    assert _names(tmp_path, reflection=False) == [n for n in full if n != "ReflectionPart"]
    # Orthogonal to the other switches: memory off keeps reflecting, learning off drops all.
    assert _names(tmp_path, memory=False) == ["EvolutionPart", "ReflectionPart", "CrewsPart"]
    assert _names(tmp_path, memory=False, reflection=False) == ["EvolutionPart", "CrewsPart"]
    assert _names(tmp_path, learning=False, reflection=False) == _names(tmp_path, learning=False)


def test_the_factory_passes_reflection_through(tmp_path: Path) -> None:
    factory = default_factory(None, ChimeraConfig(), root=tmp_path, reflection=False)
    names = [type(p).__name__ for p in factory.parts]
    assert "ReflectionPart" not in names and "EvolutionPart" in names and "MemoryPart" in names


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "TASK", "--no-reflection"],
        ["run", "--no-reflection"],
        ["resume", "R1", "--no-reflection"],
        ["approve", "R1", "--by", "me", "--no-reflection"],
    ],
)
def test_every_run_surface_takes_no_reflection(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert part_switches(args) == {"memory": True, "learning": True, "reflection": False}
    plain = build_parser().parse_args([a for a in argv if a != "--no-reflection"])
    assert part_switches(plain) == {"memory": True, "learning": True, "reflection": True}


def test_every_harness_arm_runs_without_reflection() -> None:
    assert ArmSettings().flags() == ["--no-reflection"]
    off = ArmSettings(memory=False, diff_feedback=True).flags()
    assert off == ["--no-reflection", "--no-memory", "--diff-feedback"]


def test_skills_off_keeps_memory(tmp_path: Path) -> None:
    """Before, ``learning=False`` dropped memory too and no switch kept memory while turning
    skills off; ``--no-learning`` keeps meaning both."""
    assert _names(tmp_path, learning=False) == ["MemoryPart", "CrewsPart"]
    assert _names(tmp_path, learning=False, memory=False) == ["CrewsPart"]


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "TASK"],
        ["run"],
        ["resume", "R1"],
        ["approve", "R1", "--by", "me"],
    ],
)
def test_every_run_surface_takes_no_skills(argv: list[str]) -> None:
    skills_off = part_switches(build_parser().parse_args([*argv, "--no-skills"]))
    assert skills_off == {"memory": True, "learning": False, "reflection": True}
    both_off = part_switches(build_parser().parse_args([*argv, "--no-learning"]))
    assert both_off == {"memory": False, "learning": False, "reflection": True}


def test_the_help_documents_no_skills(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["solve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--no-skills" in text and "memory stays on" in text
    assert "--no-skills and --no-memory together" in text
