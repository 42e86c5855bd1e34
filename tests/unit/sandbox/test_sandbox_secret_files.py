"""Secret files are masked by what they are, not only when named ``.env*`` (issue 32, row 7):
``prod.env``, ``secrets.yaml``, keys, key stores, credential files and tool credential stores,
at any depth; source code named ``secrets.py`` stays readable, and so does a fixture the
maintainer unmasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.sandbox import Sandbox, bwrap_available, probe_bwrap
from chimera.sandbox.secret_files import (
    SECRET_FILE_PATTERNS,
    describe_patterns,
    is_secret_file,
    secret_files,
)

_UNUSABLE = f"bubblewrap unusable: {probe_bwrap().reason}"

SECRET = [
    ".env", ".env.local", ".envrc", "prod.env", "secrets.env", "staging.db.env",
    "deploy.pem", "server.key", "client.p12", "store.pfx", "app.jks", "release.keystore",
    "vault.kdbx", "id_rsa", "id_ed25519", "id_ecdsa_sk", "credentials", "credentials.json",
    "credentials.yaml", "secrets", "secrets.yaml", "secrets.toml", "Secrets.JSON",
    "secrets.enc.yaml", ".npmrc", ".pypirc", ".netrc", ".git-credentials", ".pgpass",
    ".htpasswd", ".vault-token", ".dockercfg",
]  # fmt: skip
NOT_SECRET = [
    ".env.example", ".env.sample", ".env.template", "example.env", "sample.env",
    "app.test.env", "secrets.py", "credentials.py", "secrets.ts", "credentials_sample.json",
    "id_rsa.pub", "id_utils.py", "keys.py", "environment.yml", "README.md", "key.txt",
    "my.env.py", "envrc.md",
]  # fmt: skip


@pytest.mark.parametrize("name", SECRET)
def test_secret_by_what_it_is(name: str) -> None:
    assert is_secret_file(name)


@pytest.mark.parametrize("name", NOT_SECRET)
def test_code_and_templates_are_not_secret(name: str) -> None:
    assert not is_secret_file(name)


def test_the_patterns_are_documented_as_a_table() -> None:
    table = describe_patterns()
    assert table.splitlines()[0] == "| files | what they hold |"
    assert len(table.splitlines()) == 2 + len(SECRET_FILE_PATTERNS)
    for needle in ("*.env", "*.pem", "*.key", "id_rsa", "credentials", "secrets", ".npmrc"):
        assert needle in table


def test_found_at_any_depth_unmasked_fixtures_excepted(tmp_path: Path) -> None:
    for rel in ("prod.env", "a/b/secrets.yaml", "a/deploy.pem", "tests/fixtures/server.key",
                "tests/fixtures/cert.pem", "home/.npmrc", "src/secrets.py", ".git/x.pem",
                ".chimera/runs/prod.env"):  # fmt: skip
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n", encoding="utf-8")
    found = {p.relative_to(tmp_path).as_posix() for p in secret_files(tmp_path)}
    assert found == {
        "prod.env",
        "a/b/secrets.yaml",
        "a/deploy.pem",
        "tests/fixtures/server.key",
        "tests/fixtures/cert.pem",
        "home/.npmrc",
    }
    kept = secret_files(tmp_path, unmask=["tests/fixtures/*.pem"])
    assert tmp_path / "tests/fixtures/cert.pem" not in kept
    assert tmp_path / "tests/fixtures/server.key" in kept


VALUE = "db-pass-4b1f-e9c2-secret"


@pytest.mark.bwrap
@pytest.mark.skipif(not bwrap_available(), reason=_UNUSABLE)
def test_secret_files_are_unreadable_in_the_sandbox(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    files = {
        "prod.env": f"DB_PASSWORD={VALUE}\n",
        "config/secrets.env": f"API_SECRET={VALUE}\n",
        "config/deep/secrets.yaml": f"token: {VALUE}\n",
        "deploy/server.pem": f"-----BEGIN PRIVATE KEY-----\n{VALUE}\n",
        ".npmrc": f"//registry/:_authToken={VALUE}\n",
        "tests/fixtures/cert.pem": "public certificate fixture\n",
        "src/secrets.py": "LOOKUP = 'code, not a secret'\n",
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    sandbox = Sandbox(ws, mode="bwrap", unmask=["tests/fixtures/*.pem"])
    secret = [r for r in files if VALUE in files[r]]
    res = sandbox.run(
        f"cat {' '.join(secret)}; grep -r {VALUE} . ; for f in {' '.join(secret)}; do "
        'cp "$f" "$f.copy"; done; cat tests/fixtures/cert.pem src/secrets.py',
        cwd=ws,
        timeout=60,
    )
    assert VALUE not in res.output
    assert "public certificate fixture" in res.output  # unmasked by the maintainer
    assert "code, not a secret" in res.output  # code is never a secret file
    for rel in secret:
        copy = ws / f"{rel}.copy"
        assert not copy.exists() or VALUE not in copy.read_text(encoding="utf-8")
        assert (ws / rel).read_text(encoding="utf-8") == files[rel]  # never overwritten


def test_disposable_copies_leave_secret_files_out(tmp_path: Path) -> None:
    from chimera.sandbox.disposable import export_tree

    src = tmp_path / "src"
    for rel in ("prod.env", "a/secrets.json", "a/deploy.key", "a/code.py", "a/secrets.py"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text("x\n", encoding="utf-8")
    export_tree(src, tmp_path / "copy")
    copied = {p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*")}
    assert copied == {"a", "a/code.py", "a/secrets.py"}


def test_the_sandbox_how_to_shows_the_table_the_code_masks_by() -> None:
    page = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "sandbox.md"
    assert describe_patterns() in page.read_text(encoding="utf-8")
