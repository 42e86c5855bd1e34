"""A rebuilt configuration (``with_overrides``, e.g. under an agent profile) keeps every value
that was set, including one assigned on a section the file never set."""

from __future__ import annotations

import pytest

from chimera.config import ChimeraConfig
from chimera.errors import ConfigError


def test_rebuild_keeps_a_value_assigned_on_a_section_the_file_never_set() -> None:
    config = ChimeraConfig.model_validate({"models": {"default": "openai/a"}})
    config.run.max_iterations = 5
    config.run.allow_self_approval = True
    rebuilt = config.with_overrides(model="openai/b")
    assert rebuilt.run.max_iterations == 5
    assert rebuilt.run.allow_self_approval is True
    assert rebuilt.models.default == "openai/b"


def test_rebuild_keeps_a_nested_assignment_and_leaves_untouched_sections_unset() -> None:
    config = ChimeraConfig()
    config.agent.max_steps = 9
    rebuilt = config.with_overrides(budget_usd=1.0)
    assert rebuilt.agent.max_steps == 9
    # A section nobody set stays unset: an absent [effort] table applies no effort policy.
    assert "effort" not in rebuilt.model_fields_set
    assert {"agent", "budget"} <= rebuilt.model_fields_set


def test_rebuild_validates_an_assigned_value() -> None:
    config = ChimeraConfig()
    config.run.max_iterations = 0  # assignment is not validated; the rebuild is
    with pytest.raises(ConfigError, match=r"--run\.max-iterations: Input should be greater"):
        config.with_overrides()
