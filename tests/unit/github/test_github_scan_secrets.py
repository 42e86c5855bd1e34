"""Secrets in real patches: a planted canary in every spelling the scan undoes blocks, in
contents, file names, commit messages and PR titles, and no finding ever repeats it."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote

import pytest

from chimera.github.scan import ScanLimits, ScanResult, scan_patch, shannon_entropy
from chimera.testing.patches import make_patch, write

# Built at run time so that no token-shaped literal sits in the repository.
CANARY = "ghp_" + "Zq8Lr3Wn5Tx1Vb7KpM2Hc4Dj6Fs9Gy0Ua2Ei"
B64 = base64.b64encode(CANARY.encode()).decode()

SPELLINGS: dict[str, str] = {
    "plain": f'TOKEN = "{CANARY}"\n',
    "split-lines": f"token = {CANARY[:14]}\n  {CANARY[14:]}\n",
    "concatenation": f'TOKEN = "{CANARY[:10]}" + "{CANARY[10:25]}" + \\\n    "{CANARY[25:]}"\n',
    "implicit-concatenation": f'TOKEN = (\n    "{CANARY[:20]}"\n    "{CANARY[20:]}"\n)\n',
    "base64": f'BLOB = "{B64}"\n',
    "base64-wrapped": f'BLOB = """\n{B64[:30]}\n{B64[30:]}\n"""\n',
    "base64-urlsafe": f'BLOB = "{base64.urlsafe_b64encode(CANARY.encode()).decode()[:-2]}"\n',
    "hex": f'BLOB = "{CANARY.encode().hex()}"\n',
    "hex-escapes": "BLOB = b'" + "".join(f"\\x{b:02x}" for b in CANARY.encode()) + "'\n",
    "percent": f'URL = "https://x.example/?t={quote(CANARY, safe="")}"\n'.replace("_", "%5F"),
    "reversed": f'X = "{CANARY[::-1]}"\n',
    "base64-of-reversed": f'X = "{base64.b64encode(CANARY[::-1].encode()).decode()}"\n',
}


def _scan(tmp_path: Path, files: dict[str, str | bytes], **kwargs: object) -> ScanResult:
    patch = make_patch(tmp_path, write(files))
    return scan_patch(patch.text, workspace=str(patch.root), base=patch.base, **kwargs)  # type: ignore[arg-type]


def _no_leak(result: ScanResult) -> None:
    text = repr(result.to_json())
    for piece in (CANARY, CANARY[4:20], CANARY[::-1], B64):
        assert piece not in text


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_every_spelling_of_a_canary_blocks(tmp_path: Path, spelling: str) -> None:
    result = _scan(tmp_path, {"app/settings.py": SPELLINGS[spelling]})
    assert result.verdict == "block", result.findings
    hits = [f for f in result.blocked if f.rule in ("secret-format", "secret-encoded")]
    assert hits and all("a GitHub token" in f.reason for f in hits)
    assert hits[0].line >= 1
    _no_leak(result)


def test_a_canary_in_a_file_name_blocks(tmp_path: Path) -> None:
    result = _scan(tmp_path, {f"notes/{CANARY}.txt": "hello\n"})
    assert [f.rule for f in result.blocked] == ["secret-in-name"]
    # The path itself is reported (it is the file's name); the reason never repeats it.
    assert CANARY not in result.blocked[0].reason


@pytest.mark.parametrize("label", ["commit message", "PR title"])
def test_a_canary_in_a_message_blocks(tmp_path: Path, label: str) -> None:
    for text in (f"fix: use {CANARY}", f"fix {B64}", f"fix {CANARY[::-1]}"):
        result = _scan(tmp_path / str(abs(hash(text))), {"a.txt": "x\n"}, messages={label: text})
        assert [f.path for f in result.blocked] == [f"<{label}>"], result.findings
        _no_leak(result)


def test_private_key_blocks_and_aws_documentation_keys_do_not(tmp_path: Path) -> None:
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\n"
    assert _scan(tmp_path / "a", {"tests/data/k.txt": pem}).verdict == "block"
    doc = 'KEY = "AKIAIOSFODNN7EXAMPLE"\n'
    assert _scan(tmp_path / "b", {"docs/aws.py": doc}).verdict == "allow"


def test_high_entropy_is_flagged_but_lockfile_hashes_and_identifiers_are_not(
    tmp_path: Path,
) -> None:
    token = "Zx8Qp2LmN7vR4tY9wK3cB6hJ1sD5fG0a"
    flagged = _scan(tmp_path / "a", {"app/settings.py": f'TOKEN = "{token}"\n'})
    assert [f.rule for f in flagged.flagged] == ["high-entropy"]
    lock = _scan(tmp_path / "b", {"package-lock.json": f'"resolved": "{token}"\n'})
    assert [f.rule for f in lock.flagged] == ["dependency-manifest"]
    integrity = f'"integrity": "sha512-{token}{token}=="\n'
    assert _scan(tmp_path / "c", {"web/deps.json": integrity}).verdict == "allow"
    words = "this_is_a_very_long_identifier_name_in_snake_case = 1\n"
    assert _scan(tmp_path / "d", {"app/x.py": words}).verdict == "allow"
    assert shannon_entropy("aaaa") == 0.0 and shannon_entropy(token) > 4.0


def test_benign_code_with_base64_and_hex_data_is_allowed(tmp_path: Path) -> None:
    data = base64.b64encode(b"just some ordinary bytes of test data, nothing more").decode()
    sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    text = f'DATA = "{data}"\nDIGEST = "{sha}"  # sha256 of test\nenv = dict(os.environ)\n'
    result = _scan(tmp_path, {"app/fixtures.py": text})
    assert result.blocked == []


def test_size_and_binary_limits_block(tmp_path: Path) -> None:
    big = _scan(
        tmp_path / "a",
        {"data.txt": "x" * 5000 + "\n"},
        limits=ScanLimits(max_patch_bytes=100_000, max_file_bytes=1000),
    )
    assert [f.rule for f in big.blocked] == ["file-size"]
    whole = _scan(tmp_path / "b", {"data.txt": "y\n" * 100}, limits=ScanLimits(max_patch_bytes=50))
    assert "patch-size" in [f.rule for f in whole.blocked]
