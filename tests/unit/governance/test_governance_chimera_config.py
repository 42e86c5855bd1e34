"""Chimera's own settings file is governance: an agent must not loosen what confines it.

``chimera.toml`` holds the sandbox mode, network switch and environment allowlist; a resumed
or approved run re-reads it from the workspace. Found by tests/e2e/test_hostile_runs.py
(text ``loosen-sandbox-config``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.governance.actions import Action
from chimera.governance.kernel import TrustKernel

CONFIG = '[sandbox]\nnetwork = true\nenv_allow = ["GITHUB_TOKEN"]\n'


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("write_file", {"path": "chimera.toml", "content": CONFIG}),
        ("edit_file", {"path": "./chimera.toml", "old_text": "a", "new_text": "b"}),
        ("run_command", {"command": "printf '[sandbox]\\nnetwork = true\\n' > chimera.toml"}),
        ("run_command", {"command": "sed -i s/bwrap/scrubbed/ chimera.toml"}),
    ],
)
def test_changing_chimera_toml_is_held_for_review(
    tool: str, arguments: dict[str, str], tmp_path: Path
) -> None:
    action = Action.from_tool_call(tool, arguments, tmp_path, home=str(tmp_path / "home"))
    decision = TrustKernel().evaluate(action)
    assert decision.verdict.value == "review"
    assert "governance-file-write" in decision.rule_ids


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_file", {"path": "chimera.toml"}),
        ("run_command", {"command": "cat chimera.toml"}),
        ("write_file", {"path": "docs/examples/chimera.toml", "content": CONFIG}),
    ],
)
def test_reading_it_or_writing_an_example_elsewhere_is_fine(
    tool: str, arguments: dict[str, str], tmp_path: Path
) -> None:
    action = Action.from_tool_call(tool, arguments, tmp_path, home=str(tmp_path / "home"))
    assert not TrustKernel().evaluate(action).denied
