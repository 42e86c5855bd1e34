"""SecretRedactor.redact_json on values JSON cannot hold (converted as the writer would, then
redacted) and SecretRedactor.cut (redact, then cut: a cut through a secret keeps no piece)."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

from chimera.governance.audit_chain import jsonable
from chimera.governance.redactor import SecretRedactor, cut_redacted

# Shaped like a GitHub token (a known format), not a real one.
TOKEN = "ghp_" + "R4t5Y6u7I8o9P0a1S2d3F4g5H6j7K8l9Z0x1"
VALUE = "canary-" + "Wq3Er5Ty7Ui9"
MARK = "[REDACTED:a GitHub token]"


def _pieces(text: str, secret: str = TOKEN) -> list[str]:
    """Every piece of ``secret`` of 8 characters or more (prefix, suffix or middle) in ``text``."""
    return [
        secret[i:j]
        for i in range(len(secret))
        for j in range(i + 8, len(secret) + 1)
        if secret[i:j] in text
    ]


@dataclass
class _Step:
    command: str
    where: Path


class _Colour(enum.Enum):
    TOKEN = TOKEN


class _Opaque:
    def __str__(self) -> str:
        return f"opaque {TOKEN}"


def test_redact_json_converts_what_json_cannot_hold_then_redacts() -> None:
    redactor = SecretRedactor({"DEPLOY_KEY": VALUE})
    value = {
        "path": PurePosixPath(f"/tmp/{TOKEN}/x"),
        "step": _Step(f"echo {VALUE}", Path("a")),
        "raw": f"b {TOKEN}".encode(),
        "set": {f"s {TOKEN}"},
        "enum": _Colour.TOKEN,
        "tuple": (f"t {TOKEN}", 1, 2.5, None, True),
        f"key {TOKEN}": "keys too",
        "other": _Opaque(),
    }
    out, names = redactor.redact_json(value)
    written = json.dumps(out)  # plain JSON now: no default needed
    assert _pieces(written) == [] and VALUE not in written
    assert out["path"] == f"/tmp/{MARK}/x"
    assert out["raw"] == f"b'b {MARK}'"  # str(bytes), as json.dumps(default=str) writes it
    assert out["tuple"] == [f"t {MARK}", 1, 2.5, None, True]
    assert out[f"key {MARK}"] == "keys too"
    assert out["other"] == f"opaque {MARK}"
    assert "DEPLOY_KEY" in names and names.count("a GitHub token") >= 6


def test_redact_json_uses_the_writers_default() -> None:
    redactor = SecretRedactor()
    step = _Step(f"run {TOKEN}", Path("p"))
    # The audit log's conversion: a dataclass becomes a dict of its fields, bytes are decoded.
    out, _ = redactor.redact_json({"step": step, "raw": TOKEN.encode()}, default=jsonable)
    assert out == {"step": {"command": f"run {MARK}", "where": "p"}, "raw": MARK}
    # What the redacted value writes equals the redacted form of what the writer would write.
    plain, _ = redactor.redact(json.dumps(jsonable({"step": step}), sort_keys=True))
    redacted, _ = redactor.redact_json({"step": step}, default=jsonable)
    assert json.dumps(redacted, sort_keys=True) == plain


def test_redact_json_keeps_json_scalars_and_an_unhelpful_default_ends_in_str() -> None:
    redactor = SecretRedactor()
    assert redactor.redact_json([1, 2.0, None, False, "x"]) == ([1, 2.0, None, False, "x"], [])
    out, _ = redactor.redact_json({"o": _Opaque()}, default=lambda v: v)  # returns it unchanged
    assert out == {"o": f"opaque {MARK}"}


@pytest.mark.parametrize("limit", [20, 25, 31, 40, 55])
def test_a_cut_through_a_token_keeps_no_piece_of_it(limit: int) -> None:
    text = "insight: " + "x" * 10 + " " + TOKEN + " is how we deploy"  # straddles each limit
    assert 20 <= limit < len(text) - 17
    start = text.index(TOKEN)
    # A plain cut keeps 8+ characters of the token from limit 28 on (a redactor run after it
    # no longer sees a GitHub token: the walk would miss it) ...
    assert bool(_pieces(text[:limit])) == (limit - start >= 8)
    assert bool(_pieces(SecretRedactor().redact(text[:limit])[0])) == (limit - start >= 8)
    # ... redacting first keeps none, at either end.
    head = SecretRedactor().cut(text, limit)
    assert len(head) == limit and _pieces(head) == []
    tail_text = "we deploy with " + TOKEN + " and " + "y" * 11
    tail = SecretRedactor().cut(tail_text, limit, tail=True)
    assert len(tail) == limit and _pieces(tail) == []


def test_cut_redacted_reads_the_environment_and_takes_a_workspace_redactor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEPLOY_API_KEY", VALUE)
    text = "pasted " + VALUE + " and more words after it"
    assert "[REDACTED:DEPLOY_API_KEY]"[:12] == cut_redacted(text, 19)[7:]
    assert _pieces(cut_redacted(text, 15), VALUE) == []
    only = SecretRedactor({"X": "zzzzzzzzzz"})
    assert cut_redacted("a zzzzzzzzzz", 8, redactor=only) == "a [REDAC"
    assert cut_redacted("abc", 0) == ""


def test_an_audit_log_with_a_redactor_writes_no_secret_and_its_chain_verifies(
    tmp_path: Path,
) -> None:
    from chimera.governance.audit import AuditLog, verify_audit_log

    log = AuditLog(tmp_path / "audit.jsonl", "r1", redactor=SecretRedactor({"K": VALUE}))
    written = log.append(
        "ask.started",
        question=f"where is {TOKEN}?",
        step=_Step(f"echo {VALUE}", Path("w")),  # a dataclass: converted as the log converts it
        nested={"calls": [f"x {TOKEN}"]},
    )
    text = (tmp_path / "audit.jsonl").read_text(encoding="utf-8")
    assert _pieces(text) == [] and VALUE not in text
    assert written["fields"]["step"] == {"command": "echo [REDACTED:K]", "where": "w"}
    assert verify_audit_log(tmp_path / "audit.jsonl", head=log.head_hash).ok


def test_the_experience_buffer_and_delegation_receipts_redact_what_they_keep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chimera.economics.receipts import ReceiptLog
    from chimera.memory.experience import ExperienceBuffer
    from chimera.protocols import Experience

    (tmp_path / ".env").write_text(f"DEPLOY={VALUE}\n", encoding="utf-8")
    buffer = ExperienceBuffer(tmp_path / "experience.jsonl", workspace=tmp_path)
    buffer.append(Experience(task=f"use {TOKEN} and {VALUE}", verdict="passed"))
    (kept,) = list(buffer)
    assert kept.task == f"use {MARK} and [REDACTED:.env:DEPLOY]"
    receipts = ReceiptLog(tmp_path / "delegations.jsonl", "r1", "top")
    receipts.overhead(f"decompose {TOKEN}", [], model="top")
    assert _pieces((tmp_path / "delegations.jsonl").read_text(encoding="utf-8")) == []


def test_a_profile_rendered_with_a_redactor_stays_valid_yaml() -> None:
    import yaml

    from chimera.meta.loader import check_profile_text
    from chimera.meta.profile import render_profile

    text = f"profile: p\ninstructions: {TOKEN}\ndescription: signs with {TOKEN}\nsolver: {{}}\n"
    profile = check_profile_text(text, "p.yaml").profile
    assert profile is not None
    rendered = render_profile(profile, "header", redactor=SecretRedactor())
    assert _pieces(rendered) == []
    data = yaml.safe_load(rendered)  # a value that starts with the marker is still a string
    assert data["instructions"] == MARK and data["description"] == f"signs with {MARK}"
