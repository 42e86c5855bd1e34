"""The memory store refuses what the redactor would redact: known formats wherever they sit
(glued ones too) and the workspace's dotenv values, through the local store people write to."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.errors import UsageError
from chimera.memory.items import Candidate, Tier
from chimera.memory.part import open_local

GLUED = "key=abc" + "ghp_" + "k3Z9mQ2xR7pL5wT8vB4nC6jH1dF0gSk3Z9mQ"
DOTENV_VALUE = "hunter2-Corr3ct-Horse-Battery"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / ".env").write_text(f"DB_PASSWORD={DOTENV_VALUE}\n", encoding="utf-8")
    return tmp_path


def test_a_person_cannot_store_a_glued_token_or_a_dotenv_value(root: Path) -> None:
    manager = open_local(root)
    with pytest.raises(UsageError, match="holds a GitHub token"):
        manager.add_persona(f"deploy with {GLUED}", by="alice")
    with pytest.raises(UsageError, match=r"holds the value of \.env:DB_PASSWORD"):
        manager.add_persona(f"the database login is {DOTENV_VALUE}", by="alice")
    assert manager.add_persona("run the linter before pushing", by="alice").startswith("m-")


def test_remember_refuses_a_dotenv_value_and_writes_nothing(root: Path) -> None:
    manager = open_local(root)
    result = manager.remember(Candidate(f"login used {DOTENV_VALUE}", Tier.SEMANTIC))
    assert result.op == "REFUSED" and "the value of .env:DB_PASSWORD" in result.overruled
    assert DOTENV_VALUE not in (root / ".chimera" / "memory.db").read_bytes().decode("latin-1")
