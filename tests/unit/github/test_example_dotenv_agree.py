"""The sandbox, the tool rules, the redactor and the PR scan agree on which files are dotenv
files (``chimera.sandbox.layout.is_dotenv_name``) and which of them are templates: one list
(``chimera.sandbox.layout.EXAMPLE_DOTENV_SUFFIXES``), every user."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.github.scan.secrets import secret_file_findings
from chimera.governance.actions import Action, ActionKind
from chimera.governance.redactor import SecretRedactor
from chimera.governance.rules import Verdict
from chimera.governance.rules.paths import secret_file_reason
from chimera.sandbox.layout import EXAMPLE_DOTENV_SUFFIXES, is_secret_dotenv

TEMPLATES = tuple(f".env.{suffix}" for suffix in EXAMPLE_DOTENV_SUFFIXES)
# ``.envrc`` (direnv) once passed the tool rules, which knew only ``.env`` and ``.env.*``.
SECRETS = (
    ".env",
    ".env.local",
    ".env.production",
    ".env.example.local",
    ".env.examples",
    ".envrc",
)


def _rules_block(name: str, ws: Path) -> bool:
    resolved = f"{ws}/{name}"
    return secret_file_reason(Action.for_path(ActionKind.READ, name, ws), resolved) is not None


def _scan_blocks(name: str) -> bool:
    return any(
        Verdict(f.verdict) is Verdict.BLOCK for f in secret_file_findings(f"app/{name}", "A")
    )


def _redactor_reads(name: str, ws: Path) -> bool:
    (ws / name).write_text("API_TOKEN=s3cr3t-value-long\n", encoding="utf-8")
    return len(SecretRedactor.from_environment({}, workspace=ws)) > 0


@pytest.mark.parametrize("name", TEMPLATES + SECRETS)
def test_every_user_agrees(name: str, tmp_path: Path) -> None:
    secret = name in SECRETS
    assert is_secret_dotenv(name) is secret
    assert _rules_block(name, tmp_path) is secret
    assert _scan_blocks(name) is secret
    assert _redactor_reads(name, tmp_path) is secret


def test_the_list_is_the_one_the_three_used() -> None:
    # The scan once lacked ``test``; the rules and the sandbox had it.
    assert set(EXAMPLE_DOTENV_SUFFIXES) == {
        "example",
        "sample",
        "template",
        "dist",
        "defaults",
        "tmpl",
        "schema",
        "test",
    }


@pytest.mark.parametrize("name", [".envrc", "config/.envrc", "sub/dir/.env.local"])
def test_a_nested_dotenv_is_blocked_by_the_rules_and_the_scan(name: str, tmp_path: Path) -> None:
    reason = secret_file_reason(
        Action.for_path(ActionKind.WRITE, name, tmp_path), f"{tmp_path}/{name}"
    )
    assert reason is not None and "dotenv" in reason
    assert _scan_blocks(name)
