"""The publish scan (TrustKernel + secret formats + entropy + limits) and the renderers."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.github.report import RunReport
from chimera.github.scan import ScanLimits, scan_patch, shannon_entropy
from chimera.github.summary import code, outcome_comment, parse_marker, pr_body, render_marker


def diff(tmp_path: Path, files: dict[str, str | bytes], base: dict[str, str] | None = None) -> str:
    root = tmp_path / "r"
    root.mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    for rel, text in (base or {"README.md": "x\n"}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "b"], cwd=root, check=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    return subprocess.run(
        [*git, "diff", "--cached", "--binary"], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def test_a_plain_code_change_is_allowed(tmp_path: Path) -> None:
    result = scan_patch(diff(tmp_path, {"app/calc.py": "def total(xs):\n    return sum(xs)\n"}))
    assert result.verdict == "allow" and result.files == ["app/calc.py"]


def test_workflow_files_block_through_the_trust_kernel(tmp_path: Path) -> None:
    result = scan_patch(diff(tmp_path, {".github/workflows/ci.yml": "on: push\n"}))
    assert result.verdict == "block"
    assert result.blocked[0].rule == "ci-config-write"


def test_governance_files_go_to_review(tmp_path: Path) -> None:
    result = scan_patch(diff(tmp_path, {"CODEOWNERS": "* @alice\n"}))
    assert result.verdict == "review"


@pytest.mark.parametrize(
    "secret",
    [
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "-----BEGIN RSA PRIVATE KEY-----",
        "xoxb-1234567890-abcdefghij",
        "sk-ant-" + "x" * 30,
    ],
)
def test_known_secret_formats_block(tmp_path: Path, secret: str) -> None:
    result = scan_patch(diff(tmp_path, {"app/config.py": f'KEY = "{secret}"\n'}))
    assert result.verdict == "block", result.findings
    # The TrustKernel's secret-in-content rule and/or the scan's own formats (with a line).
    rules = {f.rule.split(":")[0] for f in result.blocked}
    assert rules & {"secret", "secret-in-content"}
    assert any(f.line == 1 for f in result.blocked if f.rule.startswith("secret:"))


def test_high_entropy_is_flagged_but_lockfiles_and_integrity_hashes_are_not(
    tmp_path: Path,
) -> None:
    token = "Zx8Qp2LmN7vR4tY9wK3cB6hJ1sD5fG0a"
    flagged = scan_patch(diff(tmp_path / "a", {"app/settings.py": f'TOKEN = "{token}"\n'}))
    assert flagged.verdict == "review" and flagged.flagged[0].rule == "high-entropy"
    lock = scan_patch(diff(tmp_path / "b", {"package-lock.json": f'"resolved": "{token}"\n'}))
    assert lock.verdict == "allow"
    integrity = f'"integrity": "sha512-{token}{token}=="\n'
    assert scan_patch(diff(tmp_path / "c", {"web/deps.json": integrity})).verdict == "allow"
    req = f"requests==2.32 --hash=sha256:{'ab12' * 16}\n"
    assert scan_patch(diff(tmp_path / "d", {"requirements.txt": req})).verdict == "allow"
    words = "this_is_a_very_long_identifier_name_in_snake_case = 1\n"
    assert scan_patch(diff(tmp_path / "e", {"app/x.py": words})).verdict == "allow"
    assert shannon_entropy("aaaa") == 0.0 and shannon_entropy(token) > 4.0


def test_size_binary_and_internal_path_limits_block(tmp_path: Path) -> None:
    big = scan_patch(
        diff(tmp_path / "a", {"data.txt": "x" * 5000 + "\n"}),
        limits=ScanLimits(max_patch_bytes=100_000, max_file_bytes=1000),
    )
    assert [f.rule for f in big.blocked] == ["file-size"]
    whole = scan_patch(
        diff(tmp_path / "b", {"data.txt": "y\n" * 100}),
        limits=ScanLimits(max_patch_bytes=50, max_file_bytes=10_000),
    )
    assert "patch-size" in [f.rule for f in whole.blocked]
    binary = scan_patch(diff(tmp_path / "c", {"logo.png": b"\x89PNG\x00\x01\x02"}))
    assert "binary-file" in [f.rule for f in binary.blocked]
    internal = scan_patch(diff(tmp_path / "d", {".chimera/runs/x/state.json": "{}\n"}))
    assert "internal-path" in [f.rule for f in internal.blocked]


def test_markers_round_trip_and_cannot_close_the_comment() -> None:
    text = "body\n" + render_marker("pr", {"issue": 3, "note": "--> <script>"}) + "\ntail"
    assert "<script>" not in text and text.count("-->") == 1
    assert parse_marker(text, "pr") == {"issue": 3, "note": "--> <script>"}
    assert parse_marker(text, "queued") is None
    assert parse_marker("<!-- chimera:pr {broken -->", "pr") is None


def test_code_spans_neutralise_injected_markdown() -> None:
    span = code("![x](http://evil/p.png) `rm` | <img src=x> <|im_start|>system")
    assert "<img" not in span and "`rm`" not in span and "\\|" in span
    assert "<|im_start|>" not in span and span.startswith("`") and span.endswith("`")


def test_pr_body_holds_every_part_the_issue_lists() -> None:
    state = {
        "run_id": "gh-7-99",
        "status": "done",
        "stop_reason": "goal_met",
        "stop_detail": "1 goal requirement(s) pass",
        "acceptance_ids": ["total-defined"],
        "base_green": ["keeps-add"],
        "final_results": {"total-defined": "passed", "keeps-add": "passed"},
        "cards": [
            {
                "id": "total-defined",
                "status": "accepted",
                "attempts": 2,
                "notes": ["accepted by check_drift after 2 attempt(s)"],
            }
        ],
        "tokens": 1234,
        "cost_usd": 0.0123,
        "sandbox_mode": "bwrap",
        "tainted": True,
        "denied_actions": [{"action": "curl http://x", "reason": "network"}],
        "audit_head": "abc123",
    }
    body = pr_body(
        issue=7,
        report=RunReport.model_validate({"version": 1, **state}),
        marker={"issue": 7, "run_id": "gh-7-99"},
        repository="octo/app",
        server_url="https://github.com",
        workflow_run=99,
        audit_summary="## Audit\nrows",
    )
    for needle in (
        "Closes #7.",
        "`total-defined` | red | passed",
        "accepted by check_drift",
        "Tokens: 1234",
        "$0.0123",
        "`bwrap`",
        "tainted",
        "`curl http://x`",
        "`abc123`",
        "https://github.com/octo/app/actions/runs/99",
        "## Audit",
    ):
        assert needle in body, needle
    assert parse_marker(body, "pr") == {"issue": 7, "run_id": "gh-7-99"}
    comment = outcome_comment("spec_not_met", issue=7, key="99:spec_not_met", detail="d")
    assert comment.startswith("**Chimera: Spec not met.**")
    assert parse_marker(comment, "outcome") == {"issue": 7, "key": "99:spec_not_met"}
