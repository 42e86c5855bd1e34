"""The ``openapi`` kind: one tool per selected operation of an OpenAPI 3.0/3.1 document.

::

    - name: pets
      openapi:
        document: api/petstore.yaml       # relative to the project root
        base_url: http://127.0.0.1:8080
        auth: {type: bearer, env: PETS_TOKEN}
        operations: {tags: [pets], ids: [getPet], paths: ["/store/*"]}

Credentials are read from the environment when a call is made and added to the request
(``Authorization`` or the API key's header or query parameter); the schema the model sees
never holds them, nor a parameter of the same name. The answer is the status and body, cut at
:data:`MAX_BODY_CHARS`; a status outside 2xx or a network error is ``ok=False``.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, urlencode

from pydantic import Field, model_validator

from chimera.errors import ConnectorError
from chimera.governance.redactor import cut_redacted as _cut
from chimera.integrations.model import ConnectorContext, ConnectorKind, OpenConnector, StrictModel
from chimera.integrations.openapi import Operation, OperationFilter, operation_schema, read_document
from chimera.protocols import ToolResult

__all__ = ["MAX_BODY_CHARS", "ApiAuth", "OpenApiConnector", "OpenApiTool"]

MAX_BODY_CHARS = 20_000
_READ_METHODS = frozenset({"get", "head", "options"})


class ApiAuth(StrictModel):
    """How a credential from the environment is attached to each request.

    ``bearer``: ``Authorization: Bearer <value>``; ``basic``: ``<value>`` is ``user:password``;
    ``api_key``: ``<value>`` in header (or query parameter) ``name``.
    """

    type: Literal["bearer", "basic", "api_key"]
    env: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    name: str = "Authorization"
    location: Literal["header", "query"] = Field(default="header", alias="in")

    def hidden(self) -> tuple[str, str]:
        """The ``(group, name)`` parameter this credential fills."""
        if self.type == "api_key":
            return (self.location, self.name)
        return ("header", "Authorization")

    def apply(self, env: Mapping[str, str], headers: dict[str, str], query: dict[str, Any]) -> None:
        """Add the credential. Raises ConnectorError when the variable is not set."""
        value = env.get(self.env)
        if not value:
            raise ConnectorError(f"credential variable {self.env} is not set")
        if self.type == "bearer":
            headers["Authorization"] = f"Bearer {value}"
        elif self.type == "basic":
            headers["Authorization"] = "Basic " + base64.b64encode(value.encode()).decode()
        elif self.location == "query":
            query[self.name] = value
        else:
            headers[self.name] = value


class OpenApiTool:
    """One operation as a Chimera tool (metadata as instance attributes)."""

    def __init__(
        self,
        op: Operation,
        parameters: dict[str, Any],
        groups: dict[str, list[str]],
        *,
        base_url: str,
        auth: ApiAuth | None,
        ctx: ConnectorContext,
    ) -> None:
        self.op = op
        self.name: str = op.operation_id
        self.description: str = f"{op.method.upper()} {op.path}" + (
            f": {op.summary}" if op.summary else ""
        )
        self.parameters = parameters
        self.groups = groups
        self.base_url = base_url.rstrip("/")
        self.auth = auth
        self.ctx = ctx
        self.sends: bool = op.method not in _READ_METHODS

    def request(self, kwargs: Mapping[str, Any]) -> urllib.request.Request:
        """The HTTP request a call makes (credentials added).

        Raises:
            ConnectorError: a path parameter is missing, or the credential is not set.
        """
        path = self.op.path
        path_args = kwargs.get("path") or {}
        for name in self.groups.get("path", []):
            if name not in path_args:
                raise ConnectorError(f"missing path parameter {name!r}")
            # safe="": a value cannot add path segments ("../admin") or a query.
            path = path.replace("{" + name + "}", quote(str(path_args[name]), safe=""))
        query = {k: v for k, v in dict(kwargs.get("query") or {}).items() if v is not None}
        headers = {str(k): str(v) for k, v in dict(kwargs.get("header") or {}).items()}
        headers["Accept"] = "application/json"
        if self.auth is not None:
            self.auth.apply(self.ctx.env(), headers, query)
        data = None
        if "body" in kwargs:
            data = json.dumps(kwargs["body"]).encode("utf-8")
            headers["Content-Type"] = "application/json"
        url = self.base_url + path + (f"?{urlencode(query, doseq=True)}" if query else "")
        return urllib.request.Request(
            url, data=data, headers=headers, method=self.op.method.upper()
        )

    def __call__(self, **kwargs: Any) -> ToolResult:
        meta: dict[str, Any] = {"connector_tool": self.name}
        try:
            req = self.request(kwargs)
        except ConnectorError as exc:
            return ToolResult(output=f"{self.name}: {exc}", ok=False, meta=meta)
        try:
            # Only http(s) base URLs pass validation, so no file:// opener is reachable.
            with urllib.request.urlopen(req, timeout=self.ctx.timeout_s) as resp:
                status, raw = resp.status, resp.read(MAX_BODY_CHARS * 4 + 1)
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read(MAX_BODY_CHARS * 4 + 1)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            return ToolResult(output=f"{self.name}: request failed: {reason}", ok=False, meta=meta)
        text = raw.decode("utf-8", "replace")
        if len(text) > MAX_BODY_CHARS:
            text = _cut(text, MAX_BODY_CHARS) + f"… [cut at {MAX_BODY_CHARS} chars]"
        meta["status"] = status
        return ToolResult(output=f"HTTP {status}\n{text}", ok=200 <= status < 300, meta=meta)


class OpenApiConnector(ConnectorKind):
    """An HTTP API described by an OpenAPI 3.0/3.1 document in the project."""

    kind_name = "openapi"

    document: str = Field(min_length=1)
    base_url: str = Field(pattern=r"^https?://[^\s]+$")
    auth: ApiAuth | None = None
    operations: OperationFilter = OperationFilter()
    max_tools: int = Field(default=64, ge=1, le=128)

    @model_validator(mode="after")
    def _relative(self) -> OpenApiConnector:
        if Path(self.document).is_absolute() or ".." in Path(self.document).parts:
            raise ValueError("'document' is a path inside the project (relative, no '..')")
        return self

    def credentials(self) -> tuple[str, ...]:
        return (self.auth.env,) if self.auth is not None else ()

    def files(self) -> tuple[tuple[str, str], ...]:
        return (("openapi.document", self.document),)

    def describe(self) -> str:
        return f"OpenAPI {self.document} over HTTP to {self.base_url}"

    def open(self, ctx: ConnectorContext) -> OpenConnector:
        path = (Path(ctx.root) / self.document).resolve()
        if any(path.is_relative_to(h) for h in ctx.hidden):
            raise ConnectorError(f"{self.document}: lies in a folder hidden from connectors")
        raw, ops = read_document(Path(ctx.root) / self.document, self.operations)
        if len(ops) > self.max_tools:
            raise ConnectorError(
                f"{self.document}: {len(ops)} operations selected, more than max_tools = "
                f"{self.max_tools}: narrow 'operations' (ids, tags or paths)"
            )
        hidden = [self.auth.hidden()] if self.auth is not None else []
        tools = []
        for op in ops:
            try:
                schema, groups = operation_schema(op, raw, hidden=hidden)
            except ConnectorError as exc:
                raise ConnectorError(f"{self.document}: {op.operation_id}: {exc}") from exc
            tools.append(
                OpenApiTool(op, schema, groups, base_url=self.base_url, auth=self.auth, ctx=ctx)
            )
        return OpenConnector(tools=list(tools), detail=f"{len(tools)} operation(s)")
