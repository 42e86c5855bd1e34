"""The HTTP side of the fake: parse a request into a :class:`FakeRequest`, apply injected
faults, hand it to :meth:`GitHubFake.handle`, write the :class:`FakeResponse` back.

Paths ``[/web]/<owner>/<name>[.git]/{info/refs,git-upload-pack,git-receive-pack}`` are git's
smart HTTP protocol (clone, fetch, push), served by :mod:`chimera.testing.github_fake.git`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from chimera.testing._server import OneShotHandler
from chimera.testing.github_fake.git import git_request
from chimera.testing.github_fake.routing import DOCS_URL, FakeRequest, FakeResponse
from chimera.testing.github_fake.state import SECONDARY_RATE_MESSAGE, FakeFault

if TYPE_CHECKING:
    from chimera.testing.github_fake.server import GitHubFake

_RATE_HEADERS = {
    "X-RateLimit-Limit": "5000",
    "X-RateLimit-Remaining": "4999",
    "X-RateLimit-Reset": "9999999999",
}


class Handler(OneShotHandler):
    """One connection, one request (``Connection: close``), answered from the fake's state."""

    @property
    def fake(self) -> GitHubFake:
        owner: GitHubFake = self.server.owner  # type: ignore[attr-defined]
        return owner

    def read_body(self) -> bytes:
        """The request body (``Content-Length`` or chunked, as git sends large pushes)."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                chunk = self.rfile.read(size) if size else b""
                self.rfile.readline()  # the CRLF after each chunk (and after the last, empty one)
                if not size:
                    return b"".join(chunks)
                chunks.append(chunk)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, resp: FakeResponse) -> None:
        if resp.raw is not None:
            data = resp.raw
        else:
            data = b"" if resp.payload is None else json.dumps(resp.payload).encode()
        self.reply(resp.status, data, resp.content_type, _RATE_HEADERS | dict(resp.headers))

    def dispatch(self, method: str) -> None:
        fake = self.fake
        split = urlsplit(self.path)
        path = split.path.removeprefix("/api/v3")
        raw = self.read_body()
        is_git = git_request(path) is not None
        req = FakeRequest(
            method=method,
            path=path,
            query={k: v[-1] for k, v in parse_qs(split.query).items()},
            body=_json(raw) if method != "GET" and not is_git else None,
            headers=dict(self.headers.items()),
            identity=fake.identity_for(self.headers.get("Authorization", "")),
        )
        if is_git:  # a pack, not JSON; faults apply to the REST and GraphQL API only
            self.send(fake.git.serve(req, raw))
            return
        if fake.rejects_unknown_tokens and req.identity is None and _unknown_token(req):
            fake.record(req, 401)
            self.send(
                FakeResponse(401, {"message": "Bad credentials", "documentation_url": DOCS_URL})
            )
            return
        fault = fake.take_fault(method, path)
        if fault is not None and fault.before is not None:
            fault.before()
        if fault is not None and fault.delay > 0 and fake.stopping.wait(fault.delay):
            return
        if fault is not None and fault.status is not None and not fault.after_write:
            self.send(self._fault_reply(fault, req))
            return
        resp = fake.handle(req)
        if resp.status < 400 and fault is not None and fault.status is not None:
            self.send(self._fault_reply(fault, req))  # after_write: the reply is lost
            return
        fake.record(req, resp.status)
        self.send(resp)

    def _fault_reply(self, fault: FakeFault, req: FakeRequest) -> FakeResponse:
        assert fault.status is not None
        headers: dict[str, str] = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = f"{fault.retry_after:g}"
        message = SECONDARY_RATE_MESSAGE if fault.secondary_rate_limit else "Server Error"
        self.fake.record(req, fault.status)
        return FakeResponse(
            fault.status, {"message": message, "documentation_url": DOCS_URL}, headers
        )

    def do_GET(self) -> None:
        self.dispatch("GET")

    def do_POST(self) -> None:
        self.dispatch("POST")

    def do_PATCH(self) -> None:
        self.dispatch("PATCH")

    def do_PUT(self) -> None:
        self.dispatch("PUT")

    def do_DELETE(self) -> None:
        self.dispatch("DELETE")


def _unknown_token(req: FakeRequest) -> bool:
    """A ``token``/``Bearer`` credential that is no App's JWT (the Apps routes judge those)."""
    scheme, _, value = req.header("Authorization").strip().partition(" ")
    return scheme.lower() in ("token", "bearer") and value.strip().count(".") != 2


def _json(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", errors="replace")
