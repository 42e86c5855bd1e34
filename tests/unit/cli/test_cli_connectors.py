"""``chimera connectors``: argv to one typed call, one-line errors, exit statuses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from chimera.cli import main

DATA = Path(__file__).resolve().parents[2] / "data" / "integrations"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["connectors", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_add_then_list_an_openapi_connector(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "api.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /items:\n    get:\n"
        "      operationId: listItems\n      responses: {'200': {description: ok}}\n",
        encoding="utf-8",
    )
    root = str(tmp_path)
    code, out, _ = run(
        capsys,
        "add",
        "items",
        "--root",
        root,
        "--openapi",
        "api.yaml",
        "--base-url",
        "http://127.0.0.1:9",
    )
    assert code == 0 and out == "wrote .chimera.d/connectors/items.yaml\n"
    code, out, _ = run(capsys, "check", "--root", root)
    assert code == 0 and out.startswith(
        "items (openapi): OpenAPI api.yaml over HTTP to http://127.0.0.1:9"
    )
    code, out, _ = run(capsys, "list", "--root", root, "--json")
    data = json.loads(out)
    assert code == 0
    [tool] = data["tools"]
    assert tool["name"] == "items__listItems" and tool["connector"] == "items" and not tool["sends"]
    assert data["schema_tokens"] == tool["tokens"] > 0
    code, _out, err = run(capsys, "add", "items", "--root", root, "--command", "x")
    assert (
        code == 2 and err.strip() == "chimera: error: a connector named 'items' is already declared"
    )


def test_an_invalid_declaration_exits_2_with_its_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / ".chimera.d" / "connectors"
    folder.mkdir(parents=True)
    (folder / "a.yaml").write_text("connectors:\n  - name: x\n    mcp: {}\n", encoding="utf-8")
    code, out, _ = run(capsys, "check", "--root", str(tmp_path))
    assert code == 2
    assert ".chimera.d/connectors/a.yaml:3:10: mcp: give exactly one of 'command'" in out


def test_a_stdio_server_that_cannot_start_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys,
        "add",
        "dead",
        "--root",
        str(tmp_path),
        "--command",
        sys.executable,
        "--arg=-c",
        "--arg=raise SystemExit(3)",
    )
    assert code == 0, err
    code, out, _ = run(capsys, "list", "--root", str(tmp_path), "--sandbox", "scrubbed")
    assert code == 1 and "connector 'dead' (.chimera.d/connectors/dead.yaml:2:3): " in out


def test_add_needs_a_base_url_for_openapi(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "add", "x", "--root", str(tmp_path), "--openapi", "a.yaml")
    assert code == 2 and "--openapi needs --base-url" in err


def test_a_missing_extra_is_one_line_and_exit_2_not_a_connector_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "api.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /items:\n    get:\n"
        "      operationId: listItems\n      responses: {'200': {description: ok}}\n",
        encoding="utf-8",
    )
    root = str(tmp_path)
    add = ("add", "items", "--root", root, "--openapi", "api.yaml")
    assert run(capsys, *add, "--base-url", "http://127.0.0.1:9")[0] == 0
    monkeypatch.setitem(sys.modules, "openapi_pydantic", None)  # as on the plain install
    code, _out, err = run(capsys, "list", "--root", root)
    assert code == 2
    assert err == (
        "chimera: error: OpenAPI connectors needs the 'openapi' extra: "
        "pip install 'pytest-chimera[openapi]'\n"
    )
