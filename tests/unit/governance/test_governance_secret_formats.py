"""The one secret-format detector (find_secret_formats) through the redactor, the
``secret-in-content`` rule and memory's check: every known format is found glued to other
characters, inside URLs, next to base64, quoted and JSON-escaped; look-alikes (bare prefixes,
short strings, commit SHAs, UUIDs, slugs that contain ``sk-``) stay untouched, since a
redaction changes the patches and diffs that reach the Spec."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from chimera.governance.actions import Action
from chimera.governance.redactor import SecretRedactor
from chimera.governance.rules import ActionFacts, default_rules, find_secret_formats
from chimera.memory.items import secret_in

_MIXED = "k3Z9mQ2xR7pL5wT8vB4nC6jH1dF0gS"  # digits, upper and lower case, like a generated key


def _body(n: int) -> str:
    """``n`` characters of a key-like body (all three character classes in any 6)."""
    return (_MIXED * (n // len(_MIXED) + 1))[:n]


# (label, token) for every format the detector knows; shaped like real ones, none real.
TOKENS: list[tuple[str, str]] = [
    ("a GitHub token", "ghp_" + _body(36)),
    ("a GitHub token", "gho_" + _body(36)),
    ("a GitHub token", "ghu_" + _body(36)),
    ("a GitHub token", "ghs_" + _body(36)),
    ("a GitHub token", "ghr_" + _body(76)),
    ("a GitHub fine-grained token", "github_pat_" + _body(22) + "_" + _body(59)),
    ("an AWS access key id", "AKIA" + "Q3ZJ7X2M5B8N4V6C"),
    ("an AWS access key id", "ASIA" + "W2Y6R9T3K5L7P1MZ"),
    ("a Slack token", "xoxb-" + "2048137265-4096123456-" + _body(24)),
    ("a Slack token", "xoxp-" + "2048137265-4096123456-8192-" + _body(32)),
    ("an Anthropic key", "sk-ant-api03-" + _body(40) + "_" + _body(40) + "-" + _body(11) + "AA"),
    ("an OpenAI key", "sk-proj-" + _body(60) + "_" + _body(40) + "-" + _body(20)),
    ("an OpenAI key", "sk-" + _body(48)),
    ("a Google API key", "AIza" + _body(30) + "_" + _body(4)),
    ("a Stripe live key", "sk_live_" + _body(24)),
    ("a Stripe live key", "rk_live_" + _body(24)),
    ("a GitLab token", "glpat-" + _body(10) + "-" + _body(9)),
    ("an npm token", "npm_" + _body(36)),
    ("a PyPI token", "pypi-AgEIcHlwaS5vcmc" + _body(60)),
]

# Where a token may sit: (text before it, text after it).
CONTEXTS: list[tuple[str, str]] = [
    ("", ""),
    ("TOKEN_", ""),  # glued to an underscore (an identifier)
    ("x", ""),  # glued to a letter
    ("key=abc", "&next=1"),  # glued to a value
    ("build2024", " done"),  # glued to a digit
    ("naïve", ""),  # glued to a non-ASCII letter
    ("Authorization: Bearer:", "\n"),
    ("https://x-access-token:", "@github.com/owner/repo.git"),
    ("https://api.example.com/v1?key=", "&x=1"),
    ("url=https%3A%2F%2Fuser%3A", "%40example.com"),  # percent-encoded: glued to a hex digit
    ("aGVsbG8gd29ybGQ=", "=="),  # base64 with padding on both sides
    ("YWJjZGVmZ2hpamts", "/YWJj+ZGVm"),  # inside a base64 run
    ('"', '"'),
    ("'", "'"),
    ("`", "`"),
    ("export TOKEN=", "_backup"),  # glued on the right too
    ("see ", "."),
]


def _json_escaped(token: str) -> list[str]:
    """The token as JSON writes it inside a string: after ``\\n``, ``\\t``, inside ``\\"``."""
    return [
        json.dumps({"log": f"line one\n{token}\tend"}),
        json.dumps({"cmd": f'echo "{token}"'}),
        json.dumps(json.dumps({"nested": f"\n{token}"})),
    ]


def _cases() -> list[tuple[str, str, str]]:
    cases = [
        (label, token, before + token + after)
        for label, token in TOKENS
        for before, after in CONTEXTS
    ]
    cases += [(label, token, text) for label, token in TOKENS for text in _json_escaped(token)]
    return cases


CASES = _cases()


def _pieces(text: str, token: str, size: int = 12) -> list[str]:
    """Every piece of ``token`` of ``size`` characters still in ``text``."""
    return [
        token[i : i + size] for i in range(len(token) - size + 1) if token[i : i + size] in text
    ]


@pytest.mark.parametrize(("label", "token", "text"), CASES)
def test_every_format_is_redacted_wherever_it_sits(label: str, token: str, text: str) -> None:
    redacted, names = SecretRedactor().redact(text)
    assert f"[REDACTED:{label}]" in redacted, redacted
    assert names and set(names) == {label}
    assert not _pieces(redacted, token), redacted
    assert [found for found, _ in find_secret_formats(text)] == [label]


@pytest.mark.parametrize(("label", "token"), TOKENS)
def test_redaction_keeps_what_surrounds_the_token(label: str, token: str) -> None:
    text = f"git clone https://x-access-token:{token}@github.com/owner/repo.git"
    redacted, _ = SecretRedactor().redact(text)
    assert redacted == (
        f"git clone https://x-access-token:[REDACTED:{label}]@github.com/owner/repo.git"
    )
    glued, _ = SecretRedactor().redact(f"key=abc{token} tail")
    assert glued == f"key=abc[REDACTED:{label}] tail"


@pytest.mark.parametrize(("label", "token"), TOKENS)
def test_the_governance_reason_names_the_format_never_a_piece(label: str, token: str) -> None:
    rule = next(r for r in default_rules() if r.id == "secret-in-content")
    action = Action.from_tool_call(
        "write_file",
        {"path": "cfg.py", "content": f"KEY = 'TOKEN_{token}'\n"},
        "/home/dev/project",
        home="/home/dev",
    )
    match = rule.check(ActionFacts(action))
    assert match is not None
    assert match.reasons == (f"contains {label}",)
    assert not _pieces(" ".join(match.reasons), token, size=5)


@pytest.mark.parametrize(("label", "token"), TOKENS)
def test_memory_refuses_every_format_glued(label: str, token: str) -> None:
    assert secret_in(f"the deploy used key=abc{token} yesterday", SecretRedactor()) == label


def test_memory_refuses_a_secret_value_of_the_environment_and_dotenv(tmp_path: Path) -> None:
    root = tmp_path
    (root / ".env").write_text("DB_PASSWORD=hunter2-Corr3ct-Horse\n", encoding="utf-8")
    redactor = SecretRedactor.from_environment(
        {"DEPLOY_TOKEN": "plain-deploy-value-77"}, workspace=root
    )
    assert secret_in("deploy with plain-deploy-value-77", redactor) == ("the value of DEPLOY_TOKEN")
    assert secret_in("login hunter2-Corr3ct-Horse ok", redactor) == (
        "the value of .env:DB_PASSWORD"
    )
    assert secret_in("nothing secret here", redactor) == ""
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n"
    assert secret_in(pem, redactor) == "a private key"


def test_overlapping_formats_are_reported_once() -> None:
    anthropic = next(t for label, t in TOKENS if label == "an Anthropic key")
    assert [label for label, _ in find_secret_formats(anthropic)] == ["an Anthropic key"]


_SHA = hashlib.sha1(b"chimera").hexdigest()
_BLOB = base64.b64encode(b"".join(hashlib.sha256(bytes([i])).digest() for i in range(256)))

# Text that looks like a credential and is not one: it must reach the Spec unchanged.
LOOK_ALIKES: list[str] = [
    "ghp_",
    "the ghp_ prefix marks a classic GitHub token; gho_, ghu_, ghs_ and ghr_ the others",
    "ghp_" + _body(20),  # too short
    "ghp_" + "x" * 35,
    "github_pat_" + _body(30),
    "my_ghp_prefix = 'ghp_'",
    f"git show {_SHA}",
    f"https://github.com/owner/repo/commit/{_SHA}",
    _SHA.upper(),
    "123e4567-e89b-12d3-a456-426614174000",
    "request-id: 9b2f6c1e-3d4a-4f5b-8c7d-0e1f2a3b4c5d",
    "AKIA",
    "AKIAIOSFODNN7EXAMPLE",  # AWS's documented example
    "AP_SOUTHEAST_ASIA_REGION_CODES",
    "EASTASIAPACIFICREGIONSXY",  # ASIA glued, no digit: a word, not a key id
    "pip install scikit-learn; import sklearn",
    "sk-learn",
    "task-fix-the-flaky-windows-test-in-the-ci-pipeline-before-release",
    "chimera/task-2041-fix-the-flaky-windows-test-in-ci-pipeline-today",
    "desk-ant-colony-simulation-framework-extras-and-more",
    "xoxo-hugs-and-kisses-from-everyone-at-the-office",
    "desk_live_reloadingenabledfortheteam",
    "npm_install_dependencies_from_lockfile",
    "AIza",
    "AIzaShort",
    "glpat-short",
    "pypi-AgEIcHlwaS5vcmc",
    "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
    _BLOB.decode("ascii"),
    "+    TOKEN_PREFIXES = ('ghp_', 'gho_', 'github_pat_', 'sk-', 'xoxb-', 'AKIA', 'npm_')\n",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_are_left_untouched(text: str) -> None:
    assert find_secret_formats(text) == []
    assert SecretRedactor().redact(text) == (text, [])
    assert secret_in(text, SecretRedactor()) == ""


def test_a_diff_of_look_alikes_reaches_the_spec_unchanged() -> None:
    diff = "\n".join(f"+{line}" for line in LOOK_ALIKES[:-2]) + "\n"
    assert SecretRedactor().redact(diff) == (diff, [])
