"""The redactor finds secrets by their shape (issue 32, row 7): the values of credential-named
keys (``KEY=value``, YAML, JSON, TOML, flags, query strings, ``oauth`` keys) and PEM
private-key blocks, in every persisted output; code keeps its meaning (``sort_key``,
references, calls, counts of tokens are left alone). It also reads the values of every secret
file of the workspace, not only ``.env*``."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.governance.redactor import SecretRedactor
from chimera.governance.secret_text import find_secret_spans, is_credential_key

V = "v4lue-9f8e7d6c"  # no known token format: only its shape can find it

REDACTED = [
    (f"DB_PASSWORD={V}", "DB_PASSWORD"),
    (f"export API_TOKEN='{V}'", "API_TOKEN"),
    (f'  password: "{V}"', "password"),
    (f"password: {V}", "password"),
    (f'{{"client_secret": "{V}", "x": 1}}', "client_secret"),
    (f'{{\\"client_secret\\": \\"{V}\\"}}', "client_secret"),  # JSON inside JSON
    (f'api_key = "{V}"', "api_key"),
    (f"apiKey: '{V}'", "apiKey"),
    (f"STRIPE_KEY={V}", "STRIPE_KEY"),
    (f"oauth_refresh: {V}", "oauth_refresh"),
    (f"GOOGLE_OAUTH={V}", "GOOGLE_OAUTH"),
    (f"curl https://x.example/cb?access_token={V}&state=1", "access_token"),
    (f"tool --password={V} run", "password"),
    (f"x-api-key: {V}", "x-api-key"),
    (f"DSN=postgres://app:{V}@db/app", "DSN"),
]
KEPT = [
    f"sort_key = {V}",
    f"cache_key: {V}",
    "api_key = os.environ['API_KEY']",
    "token = get_token()",
    "TOKEN=$GITHUB_TOKEN",
    "password: ${DB_PASSWORD}",
    "secret: {{ secrets.API }}",
    "max_tokens: 123456789",
    "prompt_tokens = 40000000",
    "password = None",
    "password: true",
    "password = settings.db_password",
    "PASSWORD=short",
]


@pytest.mark.parametrize(("text", "label"), REDACTED)
def test_a_credential_named_value_is_redacted(text: str, label: str) -> None:
    out, names = SecretRedactor().redact(text)
    assert V not in out and f"[REDACTED:{label}]" in out
    assert label in names


@pytest.mark.parametrize("text", KEPT)
def test_code_keeps_its_meaning(text: str) -> None:
    assert SecretRedactor().redact(text) == (text, [])


def test_pem_private_key_blocks_are_redacted_whole_even_when_cut() -> None:
    block = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    out, names = SecretRedactor().redact(f"key:\n{block}\ndone")
    assert out == "key:\n[REDACTED:a private key]\ndone" and names == ["a private key"]
    cut = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
    assert SecretRedactor().redact(f"x {cut}")[0] == "x [REDACTED:a private key]"
    escaped = block.replace("\n", "\\n")  # inside a JSON string
    assert "b3BlbnNz" not in SecretRedactor().redact(escaped)[0]
    public = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI\n-----END PUBLIC KEY-----"
    assert SecretRedactor().redact(public)[0] == public


def test_credential_keys() -> None:
    for key in ("password", "DB_PASSWD", "pwd", "clientSecret", "auth", "AUTH_TOKEN", "oauth"):
        assert is_credential_key(key), key
    for key in ("sort_key", "primary_key", "author", "authority", "session", "max_tokens"):
        assert not is_credential_key(key), key


def test_spans_are_linear_on_hostile_text() -> None:
    import time

    start = time.perf_counter()
    for text in ("a:" * 50_000, "x" * 100_000 + ":", "token:" * 20_000):
        find_secret_spans(text)
    assert time.perf_counter() - start < 5  # seconds, on a busy machine; quadratic took minutes


def test_values_of_every_secret_file_are_read(tmp_path: Path) -> None:
    (tmp_path / "prod.env").write_text("DB_URL=postgres://u:pw-one-7788@h/db\n", encoding="utf-8")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "secrets.yaml").write_text(
        "service: {name: x}\nsigning: pw-two-99aa-11bb\n", encoding="utf-8"
    )
    (tmp_path / "config" / "credentials.json").write_text(
        '{\n  "user": "bot",\n  "blob": "pw-three-55cc-66dd"\n}\n', encoding="utf-8"
    )
    redactor = SecretRedactor.from_environment({}, workspace=tmp_path)
    text = "postgres://u:pw-one-7788@h/db / pw-two-99aa-11bb / pw-three-55cc-66dd"
    out, names = redactor.redact(text)
    assert "pw-" not in out
    assert out == (
        "[REDACTED:prod.env:DB_URL] / [REDACTED:config/secrets.yaml:signing] / "
        "[REDACTED:config/credentials.json:blob]"
    )
    assert set(names) == {
        "prod.env:DB_URL",
        "config/secrets.yaml:signing",
        "config/credentials.json:blob",
    }
