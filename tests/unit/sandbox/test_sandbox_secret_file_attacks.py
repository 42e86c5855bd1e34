"""Secret files under other names (the closing attacker's pass over issue 32's row 7): a
dotenv file named ``config.env.local``, ``prod.env.production`` or ``PROD.ENV`` was readable
in the sandbox; and the patch scan let a patch *add* a file the sandbox masks (``prod.env``,
``secrets.yaml``, ``.npmrc``): what the sandbox hides by its name is never published either.
Code and templates keep their names' meaning (``my.env.py``, ``docker.env.example``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.github.scan import scan_patch
from chimera.sandbox import Sandbox, bwrap_available, probe_bwrap
from chimera.sandbox.secret_files import is_secret_file
from chimera.testing.patches import make_patch, write

DOTENV_NAMES = ["config.env.local", "prod.env.production", "PROD.ENV", "app.env.bak"]
NOT_SECRET = ["my.env.py", "docker.env.example", "app.env.sample.json", "settings.env.md",
              "env.py", "environment.yml", "app.test.env"]  # fmt: skip


@pytest.mark.parametrize("name", DOTENV_NAMES)
def test_a_dotenv_file_by_any_environment_name_is_secret(name: str) -> None:
    assert is_secret_file(name)


@pytest.mark.parametrize("name", NOT_SECRET)
def test_code_prose_and_templates_stay_readable(name: str) -> None:
    assert not is_secret_file(name)


@pytest.mark.bwrap
@pytest.mark.skipif(not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}")
def test_the_sandbox_masks_them(tmp_path: Path) -> None:
    for name in DOTENV_NAMES:
        (tmp_path / "config" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "config" / name).write_text(f"DB_PASSWORD=leak-{len(name)}\n")
    res = Sandbox(tmp_path, mode="bwrap").run(
        "cat config/* 2>&1; echo done", cwd=tmp_path, timeout=60
    )
    assert "done" in res.output and "leak-" not in res.output, res.output


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("prod.env", "DB_PASSWORD=Xk9vQ2mPz7\n"),
        ("config.env.local", "DB_PASSWORD=Xk9vQ2mPz7\n"),
        ("config/secrets.yaml", "db_password: Xk9vQ2mPz7\n"),
        ("deploy/credentials.json", '{"token": "Xk9vQ2mPz7"}\n'),
        (".npmrc", "//registry.example/:_authToken=abcdef123\n"),
        ("home/.pypirc", "[pypi]\npassword = Xk9vQ2mPz7\n"),
    ],
)
def test_the_scan_never_publishes_a_file_the_sandbox_masks(
    tmp_path: Path, path: str, text: str
) -> None:
    patch = make_patch(tmp_path, write({path: text}))
    result = scan_patch(patch.text, workspace=str(patch.root), base=patch.base)
    assert result.verdict == "block", result.findings
    assert "secret-file" in {f.rule for f in result.blocked}
    assert all("Xk9vQ2mPz7" not in f.reason for f in result.findings)
