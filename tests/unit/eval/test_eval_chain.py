"""Chain files and the scripted model generated from a task."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.errors import ConfigError, ProviderError
from chimera.eval.chain import PLAN_RIGHT, PLAN_WRONG, Chain, ChainTask, scripted_turns
from chimera.protocols import Purpose
from chimera.providers.scripted import ScriptedBackend

SHIPPED = Path(__file__).resolve().parents[3] / "chimera" / "eval" / "chains" / "inflection"


def test_the_shipped_chain_loads_with_twelve_tasks_and_its_license() -> None:
    chain = Chain.load(SHIPPED / "chain.yaml")
    assert len(chain.tasks) == 12
    assert (chain.project_dir / "LICENSE").read_text().startswith("Copyright")
    assert sum(t.trap for t in chain.tasks) == 3
    assert {t.family for t in chain.tasks} == {"plurals", "ordinals", "slugs", "strings"}


def test_a_bad_chain_names_file_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    path = tmp_path / "c.yaml"
    path.write_text(
        "name: c\nproject: p\ntasks:\n  - id: t1\n    task: x\n"
        "    requirements: [{id: r}]\n    famly: f\n"
    )
    with pytest.raises(
        ConfigError, match=r"c\.yaml:7:5: tasks\.0\.famly: unknown field; did you mean 'family'\?"
    ):
        Chain.load(path)
    path.write_text(
        "name: c\nproject: nowhere\ntasks:\n  - {id: t1, task: x, requirements: [{id: r}]}\n"
    )
    with pytest.raises(ConfigError, match="no folder 'nowhere'"):
        Chain.load(path)


def _task(**kw: object) -> ChainTask:
    base = {"id": "t", "task": "x", "requirements": [{"id": "r"}], "path": "m.py"}
    return ChainTask.model_validate({**base, "right": "R", "wrong": "W", **kw})


@pytest.mark.parametrize(
    ("fields", "prompt", "writes"),
    [
        ({"needs": "[rule]"}, "lessons: [rule] failed before", "R"),
        ({"needs": "[rule]"}, "no lessons", "W"),
        ({"trap": True, "needs": ""}, "lessons: [rule]", "W"),
        ({}, "anything", "R"),
    ],
)
def test_the_scripted_model_writes_right_only_when_it_recalls(
    fields: dict[str, object], prompt: str, writes: str
) -> None:
    model = ScriptedBackend(scripted_turns(_task(**fields)))
    plan = model.complete([{"role": "user", "content": prompt}], purpose=Purpose.PLAN)
    assert plan.text in (PLAN_RIGHT, PLAN_WRONG)
    act = model.complete([{"role": "user", "content": f"# Plan\n{plan.text}"}], purpose=Purpose.ACT)
    assert act.tool_calls[0].name == "write_file"
    assert f'"content": "{writes}"' in act.tool_calls[0].arguments
    done = model.complete([{"role": "user", "content": "x"}], purpose=Purpose.ACT)
    assert done.text == "Wrote m.py." and not done.tool_calls


def test_alternatives_that_all_fail_are_an_error_not_a_skip() -> None:
    model = ScriptedBackend(
        [
            {"purpose": "act", "when": ["A"], "text": "a"},
            {"purpose": "act", "when": ["B"], "text": "b"},
        ]
    )
    with pytest.raises(ProviderError, match=r"turns 1-2 .* none of their when/unless"):
        model.complete([{"role": "user", "content": "C"}])
    assert model.position == 0
    assert model.complete([{"role": "user", "content": "B"}]).text == "b"
    assert model.position == 2


def test_scripted_turns_need_code() -> None:
    with pytest.raises(ValueError, match="no path/right/wrong"):
        scripted_turns(ChainTask.model_validate({"id": "t", "task": "x", "requirements": [{}]}))
