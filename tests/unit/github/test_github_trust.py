"""The trust chain's pieces: untrusted text made inert, the hand-offs' parsing, the sandbox
and runner settings, the LLM key's reach, the Spec verdict on a PR (check run or status), the
GITHUB_TOKEN's 403 on PRs, and an advisory verdict."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chimera.errors import ChimeraError, ConfigError
from chimera.github.conversation.untrusted import fence_block
from chimera.github.trust.basecommit import sha256_text
from chimera.github.trust.chain import Decided, Verified, acceptance_output
from chimera.github.trust.settings import ActionSettings
from chimera.testing.github_fake import FakeRepo, GitHubFake


def test_untrusted_text_is_fenced_and_made_inert() -> None:
    text = "run ```` this\n<!-- hidden --> @alice see #12 and o/r#3\n<!-- chimera:pr {} "
    block = fence_block(text)
    fence = block.splitlines()[0].removesuffix("text")
    assert fence == "`" * 5 and block.endswith("\n" + fence)
    assert "<!--" not in block and "hidden" not in block and "chimera:pr" not in block
    assert "@alice" not in block and "#12" not in block and "#3" not in block
    assert "alice" in block and "12" in block  # still readable


def env_of(decided: dict[str, str]) -> dict[str, str]:
    return {f"CHIMERA_DECIDED_{k.upper().replace('-', '_')}": v for k, v in decided.items()}


def test_decided_outputs_round_trip_and_a_changed_block_is_refused() -> None:
    acceptance, digest = acceptance_output("x\n```chimera\nrequirements: []\n```\n")
    decided = Decided(
        issue=7, mode="run", base_sha="a" * 40, acceptance=("requirements: []\n",),
        acceptance_sha256=digest, started_by="alice",
    )  # fmt: skip
    outputs = decided.to_outputs()
    assert outputs["acceptance"] == acceptance
    assert Decided.from_env(env_of(outputs)) == decided
    edited = env_of(outputs) | {"CHIMERA_DECIDED_ACCEPTANCE": '["requirements: [{}]"]'}
    with pytest.raises(ChimeraError, match="does not match the hash decide recorded"):
        Decided.from_env(edited)
    with pytest.raises(ConfigError, match="CHIMERA_DECIDED_BASE_SHA"):
        Decided.from_env(env_of(outputs) | {"CHIMERA_DECIDED_BASE_SHA": "main"})


def test_verified_outputs_are_checked() -> None:
    good = {
        "CHIMERA_VERIFIED_BASE_SHA": "b" * 40,
        "CHIMERA_VERIFIED_PATCH_SHA256": sha256_text(""),
        "CHIMERA_VERIFIED_SPEC_DIGEST": sha256_text("s"),
        "CHIMERA_VERIFIED_VERDICT": "passed",
    }
    assert Verified.from_env(good).verdict == "passed"
    with pytest.raises(ConfigError, match="is not a verdict"):
        Verified.from_env(good | {"CHIMERA_VERIFIED_VERDICT": "::set-output"})
    with pytest.raises(ConfigError, match="not set"):
        Verified.from_env({k: v for k, v in good.items() if "DIGEST" not in k})


def test_sandbox_runner_and_key_settings() -> None:
    assert ActionSettings.from_env({}).sandbox == "strict"
    assert ActionSettings.from_env({"CHIMERA_SANDBOX": "scrubbed"}).sandbox == "scrubbed"
    with pytest.raises(ConfigError, match="CHIMERA_SANDBOX"):
        ActionSettings.from_env({"CHIMERA_SANDBOX": "off"})
    with pytest.raises(ConfigError, match="runner or Chimera variable"):
        ActionSettings.from_env({"CHIMERA_LLM_KEY_VARIABLE": "GITHUB_TOKEN"})


def run_action(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CHIMERA_"))}
    return subprocess.run(
        [sys.executable, "-c", "import sys; from chimera.cli import main; sys.exit(main())", *args],
        env=base | env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("mode", ["agent", "verify"])
def test_model_written_code_never_runs_on_a_reused_self_hosted_runner(
    tmp_path: Path, mode: str
) -> None:
    event = tmp_path / "e.json"
    event.write_text("{}")
    env = {"GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": str(event)}
    proc = run_action(env | {"RUNNER_ENVIRONMENT": "self-hosted"}, "action", "--mode", mode)
    assert proc.returncode == 2 and "not declared ephemeral" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_the_llm_key_reaches_the_child_under_its_name_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chimera.github.jobs import agent

    monkeypatch.setenv("CHIMERA_LLM_API_KEY", "sk-test")
    monkeypatch.setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "oidc")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs")
    seen = agent.child_env("ANTHROPIC_API_KEY")
    assert seen["ANTHROPIC_API_KEY"] == "sk-test"
    assert not {"CHIMERA_LLM_API_KEY", "GITHUB_TOKEN"} & set(seen)
    assert not [k for k in seen if k.startswith("ACTIONS_")]


def test_the_spec_verdict_is_a_check_run_or_with_a_personal_token_a_status(
    fake: GitHubFake, repo: FakeRepo, work: tuple[Path, Path], make_client: Callable[..., Any]
) -> None:
    from chimera.github.client.client import GitHubClient

    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=work[1], capture_output=True, text=True, check=True
    ).stdout.strip()
    app = GitHubClient(
        "octo/app", fake.add_app_token("chimera-app", repos=("octo/app",)), api_url=fake.api_url,
        throttle=False,
    )  # fmt: skip
    assert app.spec_verdict(sha, passed=True, title="Spec met", summary="s") == "check_run"
    pat = make_client("alice")
    assert pat.spec_verdict(sha, passed=False, title="Spec not met", summary="s") == "status"
    assert [s["context"] for s in repo.statuses] == ["chimera/spec"]
