"""The held-out verdict: a salted digest, a public part that says nothing, sealing."""

from __future__ import annotations

import json

import pytest

from chimera.core.heldout import PUBLIC_MESSAGE, HeldOutResult, HeldOutVerdict, verify_digest
from chimera.core.heldout.seal import generate_keypair, open_record, seal_record
from chimera.errors import ConfigError

FAILED = HeldOutResult(id="secret-id", status="failed", evidence="exit 1: canary-output")


def test_public_part_names_nothing_and_private_part_verifies() -> None:
    verdict = HeldOutVerdict(results=(FAILED, HeldOutResult(id="ok-id", status="passed")))
    assert not verdict.passed and verdict.failed == (FAILED,)
    public = verdict.public()
    assert public == {"verdict": "failed", "message": PUBLIC_MESSAGE, "digest": verdict.digest}
    text = json.dumps(public)
    assert "secret-id" not in text and "canary" not in text and "ok-id" not in text
    private = verdict.private()
    assert private["digest"] == verdict.digest and verify_digest(private)
    tampered = {**private, "results": [{**private["results"][0], "status": "passed"}]}
    assert not verify_digest(tampered)
    assert not verify_digest({"digest": "x"})
    assert verdict.maintainer_lines() == ["held-out secret-id: failed: exit 1: canary-output"]


def test_the_salt_stops_confirming_a_guess() -> None:
    a, b = HeldOutVerdict(results=(FAILED,)), HeldOutVerdict(results=(FAILED,))
    assert a.digest != b.digest  # same content, another salt
    assert a.digest.startswith("sha256:") and len(a.digest) == 7 + 64


def test_no_applicable_requirement_passes_and_a_problem_fails_closed() -> None:
    assert HeldOutVerdict(skipped=("later",)).passed
    broken = HeldOutVerdict(problem="the held-out spec does not load: x")
    assert not broken.passed and broken.public()["message"] == PUBLIC_MESSAGE
    assert broken.maintainer_lines() == ["held-out problem: the held-out spec does not load: x"]


def test_a_sealed_record_opens_only_with_the_maintainers_key() -> None:
    public, private = generate_keypair()
    record = HeldOutVerdict(results=(FAILED,)).private()
    sealed = seal_record(record, public)
    assert b"secret-id" not in sealed and b"canary" not in sealed
    assert open_record(sealed, private) == record
    _other_public, other_private = generate_keypair()
    with pytest.raises(ConfigError, match="does not open with this key"):
        open_record(sealed, other_private)
    with pytest.raises(ConfigError, match="not base64"):
        seal_record(record, "not base64!")
    with pytest.raises(ConfigError, match="is 3 bytes"):
        seal_record(record, "YWJj")
