"""OpenAPI documents to tools: refs and their cycles, filters, grouping, credentials, calls."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from chimera.errors import ConnectorError
from chimera.integrations.kinds.openapi import OpenApiConnector
from chimera.integrations.model import ConnectorContext
from chimera.integrations.openapi import OperationFilter, read_document, resolve_refs


def document(schemas: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "pets", "version": "1"},
        "paths": {
            "/pets/{petId}": {
                "parameters": [{"$ref": "#/components/parameters/PetId"}],
                "get": {
                    "operationId": "getPet",
                    "tags": ["pets"],
                    "summary": "One pet",
                    "parameters": [
                        {"name": "verbose", "in": "query", "schema": {"type": "boolean"}},
                        {"name": "X-Api-Key", "in": "header", "schema": {"type": "string"}},
                    ],
                    "responses": {"200": {"description": "ok"}},
                },
                "put": {
                    "operationId": "updatePet",
                    "tags": ["pets"],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}
                        },
                    },
                    "responses": {"200": {"description": "ok"}},
                },
            },
            "/store/inventory": {
                "get": {"tags": ["store"], "responses": {"200": {"description": "ok"}}}
            },
        },
        "components": {
            "parameters": {
                "PetId": {
                    "name": "petId",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string"},
                }
            },
            "schemas": schemas
            or {
                "Pet": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "owner": {"$ref": "#/components/schemas/Person"},
                    },
                },
                "Person": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        },
    }


def write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "api.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_self_mutual_and_deep_cycles_are_cut_where_they_close() -> None:
    schemas = {
        "Self": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Self"}}},
        "A": {"properties": {"b": {"$ref": "#/components/schemas/B"}}},
        "B": {"properties": {"a": {"$ref": "#/components/schemas/A"}}},
        "D1": {"properties": {"x": {"$ref": "#/components/schemas/D2"}}},
        "D2": {"properties": {"x": {"$ref": "#/components/schemas/D3"}}},
        "D3": {"properties": {"x": {"$ref": "#/components/schemas/D4"}}},
        "D4": {"items": {"$ref": "#/components/schemas/D1"}},
    }
    doc = document(schemas)
    own = resolve_refs({"$ref": "#/components/schemas/Self"}, doc)
    assert "recursive" in own["properties"]["next"]["description"]
    mutual = resolve_refs({"$ref": "#/components/schemas/A"}, doc)
    assert mutual["properties"]["b"]["properties"]["a"]["description"].startswith(
        "recursive: #/components/schemas/A -> #/components/schemas/B -> #/components/schemas/A"
    )
    deep = resolve_refs({"$ref": "#/components/schemas/D1"}, doc)
    leaf = deep["properties"]["x"]["properties"]["x"]["properties"]["x"]["items"]
    assert "D1 -> " in leaf["description"] and leaf["type"] == "object"
    json.dumps(deep)  # finite


def test_remote_and_dangling_refs_are_refused() -> None:
    with pytest.raises(
        ConnectorError, match=re.escape("remote reference 'https://evil.example/x.json'")
    ):
        resolve_refs({"$ref": "https://evil.example/x.json"}, {})
    with pytest.raises(ConnectorError, match=re.escape("remote reference 'other.yaml#/A'")):
        resolve_refs({"items": {"$ref": "other.yaml#/A"}}, {})
    with pytest.raises(ConnectorError, match="points at nothing"):
        resolve_refs({"$ref": "#/components/schemas/Nope"}, {"components": {}})


def test_a_wide_expansion_is_refused() -> None:
    # Acyclic but exponential: each level refers to the next twice.
    schemas: dict[str, object] = {
        f"L{i}": {
            "properties": {
                "a": {"$ref": f"#/components/schemas/L{i + 1}"},
                "b": {"$ref": f"#/components/schemas/L{i + 1}"},
            }
        }
        for i in range(30)
    }
    schemas["L30"] = {"type": "string"}
    with pytest.raises(ConnectorError, match="expands past"):
        resolve_refs({"$ref": "#/components/schemas/L0"}, {"components": {"schemas": schemas}})


@pytest.mark.parametrize(
    ("select", "expected"),
    [
        (OperationFilter(), ["getPet", "updatePet", "get_store_inventory"]),
        (OperationFilter(ids=("get?et",)), ["getPet"]),
        (OperationFilter(tags=("store",)), ["get_store_inventory"]),
        (OperationFilter(paths=("/pets/*",)), ["getPet", "updatePet"]),
    ],
)
def test_operations_are_filtered(
    tmp_path: Path, select: OperationFilter, expected: list[str]
) -> None:
    _raw, ops = read_document(write(tmp_path, document()), select)
    assert [op.operation_id for op in ops] == expected


def test_an_invalid_document_is_one_line(tmp_path: Path) -> None:
    bad = document()
    del bad["info"]
    with pytest.raises(ConnectorError, match="not a valid OpenAPI document: info"):
        read_document(write(tmp_path, bad))
    (tmp_path / "api.yaml").write_text("openapi: 3.1.0\npaths: [\n", encoding="utf-8")
    with pytest.raises(ConnectorError, match=r"api.yaml:3:1: invalid YAML"):
        read_document(tmp_path / "api.yaml")
    swagger = {"swagger": "2.0", "info": {"title": "x", "version": "1"}, "paths": {}}
    with pytest.raises(ConnectorError, match=re.escape("must be 3.0.x or 3.1.x")):
        read_document(write(tmp_path, swagger))


class _Api(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        _Api.seen.append(
            {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
        )
        status = 404 if "missing" in self.path else 200
        payload = json.dumps({"path": self.path, "status": status}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_PUT = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    _Api.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_tools_call_the_api_with_credentials_from_the_environment(tmp_path: Path, api: str) -> None:
    write(tmp_path, document())
    kind = OpenApiConnector.model_validate(
        {
            "document": "api.yaml",
            "base_url": api,
            "auth": {"type": "api_key", "env": "PETS_KEY", "name": "X-Api-Key", "in": "header"},
            "operations": {"tags": ["pets"]},
        }
    )
    env = {"PETS_KEY": "secret-key-value"}
    opened = kind.open(ConnectorContext(root=tmp_path, environ=env))
    tools = {t.name: t for t in opened.tools}
    get_pet, update = tools["getPet"], tools["updatePet"]
    # Grouped parameters; the credential header is not in what the model sees.
    params = get_pet.parameters
    assert set(params["properties"]) == {"path", "query"} and params["required"] == ["path"]
    assert "secret" not in json.dumps(params) and "X-Api-Key" not in json.dumps(params)
    assert update.parameters["properties"]["body"]["properties"]["owner"]["properties"]["name"]
    assert get_pet.sends is False and update.sends is True

    result = get_pet(path={"petId": "../admin?x=1"}, query={"verbose": True})
    assert result.ok and result.output.startswith("HTTP 200")
    request = _Api.seen[-1]
    assert request["path"] == "/pets/..%2Fadmin%3Fx%3D1?verbose=True"  # no path traversal
    assert request["headers"]["X-Api-Key"] == "secret-key-value"

    put = update(path={"petId": "7"}, body={"name": "Rex"})
    assert put.ok and json.loads(_Api.seen[-1]["body"]) == {"name": "Rex"}
    assert _Api.seen[-1]["method"] == "PUT"

    missing = get_pet(path={"petId": "missing"})
    assert not missing.ok and missing.output.startswith("HTTP 404")
    no_path = get_pet(query={})
    assert not no_path.ok and "missing path parameter 'petId'" in no_path.output

    env.clear()  # read at call time: a credential unset now fails the call, not the import
    unset = get_pet(path={"petId": "1"})
    assert not unset.ok and "PETS_KEY is not set" in unset.output


def test_too_many_operations_name_the_filter(tmp_path: Path) -> None:
    write(tmp_path, document())
    kind = OpenApiConnector(document="api.yaml", base_url="http://127.0.0.1:9", max_tools=1)
    with pytest.raises(ConnectorError, match="3 operations selected, more than max_tools = 1"):
        kind.open(ConnectorContext(root=tmp_path))


def test_an_unreachable_api_is_an_error_result(tmp_path: Path) -> None:
    write(tmp_path, document())
    kind = OpenApiConnector(document="api.yaml", base_url="http://127.0.0.1:9")
    [tool] = [
        t
        for t in kind.open(ConnectorContext(root=tmp_path, timeout_s=5)).tools
        if t.name == "get_store_inventory"
    ]
    result = tool()
    assert not result.ok and "request failed" in result.output


def test_a_document_in_a_hidden_folder_is_refused(tmp_path: Path) -> None:
    hidden = tmp_path / "specs-heldout"
    hidden.mkdir()
    (hidden / "api.yaml").write_text(yaml.safe_dump(document()), encoding="utf-8")
    kind = OpenApiConnector(document="specs-heldout/api.yaml", base_url="http://127.0.0.1:9")
    assert kind.open(ConnectorContext(root=tmp_path)).tools  # the control: it loads
    with pytest.raises(ConnectorError, match="hidden from connectors"):
        kind.open(ConnectorContext(root=tmp_path, hidden=(hidden.resolve(),)))
