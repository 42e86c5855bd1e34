"""Names that become folders, files or prompt headers are the whole string (the closing
attacker's pass over issue 32's "one parse at every boundary"): Python's ``$`` also matches
before a final newline, so a skill proposed by an agent job named ``"calc\\n"`` — or a
schedule, a connector, a crew role, an agent profile — passed its grammar and carried a line
break into a folder name and every header that shows it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from chimera.crews.model import Role
from chimera.errors import ConfigError
from chimera.evolution.skills import LearnedSkill, SkillStore
from chimera.governance.validators import ScheduleValidator, SkillValidator
from chimera.integrations.model import ConnectorFields


def _skill(name: str) -> LearnedSkill:
    return LearnedSkill(name=name, description="Sums a list.", body="Use sum().")


def test_a_skill_name_with_a_trailing_newline_is_refused(tmp_path: Path) -> None:
    assert _skill("calc-totals").problems() == []
    assert _skill("calc-totals\n").problems()
    text = (
        _skill("calc-totals").to_markdown().replace("name: calc-totals", 'name: "calc-totals\\n"')
    )
    with pytest.raises(ConfigError, match="name"):
        LearnedSkill.from_markdown(text)
    with pytest.raises(ConfigError):
        SkillStore(tmp_path / "skills").mint(_skill("calc-totals\n"))
    assert not (tmp_path / "skills").exists() or list((tmp_path / "skills").iterdir()) == []


def test_agent_made_skills_and_schedules_keep_one_line_names() -> None:
    assert SkillValidator().validate("nightly", "Run {x}.").ok
    assert not SkillValidator().validate("nightly\n", "Run {x}.").ok
    assert not ScheduleValidator().validate("nightly\n", "0 3 * * *", task="Tidy the docs").ok


def test_connector_and_role_names_keep_one_line() -> None:
    with pytest.raises(ValidationError):
        ConnectorFields.model_validate({"name": "docs\n", "kind": "mcp"})
    with pytest.raises(ValidationError):
        Role.model_validate({"name": "writer\n", "goal": "Write."})
