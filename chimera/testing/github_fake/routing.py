"""One request in, one response out: the types every handler of the fake shares.

A handler is a method of a :class:`Resource` marked with :func:`route`; it takes one
:class:`FakeRequest` and returns one :class:`FakeResponse` (or raises :class:`HttpError`).
Path templates name their parameters: ``{repo}`` is ``/repos/{owner}/{name}``, ``{num:int}``
matches digits, ``{branch:path}`` may span slashes, any other ``{x}`` is one path segment.
"""

from __future__ import annotations

import itertools
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from chimera.testing.github_fake.state import ROLE_RANK, FakeRepo, Identity

if TYPE_CHECKING:
    from chimera.testing.github_fake.payloads import Payloads
    from chimera.testing.github_fake.server import GitHubFake

DOCS_URL = "https://docs.github.com/rest"
JSON = "application/json; charset=utf-8"


@dataclass(frozen=True)
class FakeRequest:
    """One parsed request.

    Attributes:
        method: ``GET``, ``POST``, ``PATCH``, ``PUT`` or ``DELETE``.
        path: the path without ``/api/v3`` and the query string.
        params: the path parameters the route's template named (URL-decoded).
        query: the query string, last value per key.
        body: the JSON body (``None`` when empty; a string when it is not JSON).
        headers: the request headers.
        identity: who the ``Authorization`` header's token acts as (``None``: anonymous or an
            unknown token).
    """

    method: str
    path: str
    params: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    identity: Identity | None = None

    @property
    def login(self) -> str | None:
        return self.identity.login if self.identity is not None else None

    def header(self, name: str) -> str:
        """A request header by name, any case (HTTP names are case-insensitive); ``""``."""
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), "")

    @property
    def data(self) -> dict[str, Any]:
        """The body when it is a JSON object, else ``{}``."""
        return self.body if isinstance(self.body, dict) else {}

    def number(self, name: str = "num") -> int:
        """A numeric path parameter (the route's template guarantees digits)."""
        return int(self.params[name])


@dataclass(frozen=True)
class FakeResponse:
    """What a handler answers: a JSON ``payload`` (``None``: no body) or ``raw`` bytes."""

    status: int
    payload: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    content_type: str = JSON


class HttpError(Exception):
    """An error answer with GitHub's body shape (``message``, ``documentation_url``, extras)."""

    def __init__(self, status: int, message: str, *, docs: str = DOCS_URL, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.payload: dict[str, Any] = {"message": message, "documentation_url": docs, **extra}


def validation_failed(*errors: Any) -> HttpError:
    """GitHub's 422 ``Validation Failed`` with its ``errors`` list."""
    return HttpError(422, "Validation Failed", errors=list(errors))


Handler = Callable[[FakeRequest], FakeResponse]
_H = TypeVar("_H", bound=Callable[..., FakeResponse])
_ROUTES: dict[Callable[..., FakeResponse], tuple[str, str, int]] = {}
_ORDER = itertools.count()
_REPO = "/repos/{owner}/{name}"
_PARAM = re.compile(r"\{(\w+)(?::(int|path))?\}")
_PARAM_RE = {None: "[^/]+", "int": r"\d+", "path": ".+"}


def route(method: str, template: str) -> Callable[[_H], _H]:
    """Mark a :class:`Resource` method as the handler of ``method template``.

    Routes are tried resource by resource (see ``resources.all_resources``), each resource's
    in the order they are declared; the first full match wins.
    """

    def mark(fn: _H) -> _H:
        _ROUTES[fn] = (method, template, next(_ORDER))
        return fn

    return mark


def _first(item: tuple[int, str, re.Pattern[str], Handler]) -> int:
    return item[0]


def compile_template(template: str) -> re.Pattern[str]:
    """The regular expression of a path template (see the module docstring)."""
    text = template.replace("{repo}", _REPO)
    out, pos = [], 0
    for match in _PARAM.finditer(text):
        out.append(re.escape(text[pos : match.start()]))
        out.append(f"(?P<{match.group(1)}>{_PARAM_RE[match.group(2)]})")
        pos = match.end()
    out.append(re.escape(text[pos:]))
    return re.compile("".join(out))


class Resource:
    """A group of handlers sharing the fake's state and the lookups every handler needs."""

    def __init__(self, fake: GitHubFake) -> None:
        self.fake = fake

    @property
    def json(self) -> Payloads:
        return self.fake.payloads

    def routes(self) -> list[tuple[str, re.Pattern[str], Handler]]:
        """``(method, pattern, bound handler)`` of every :func:`route` of the class, in the
        order they are declared."""
        found = []
        for cls in type(self).__mro__:
            for attr in vars(cls).values():
                spec = _ROUTES.get(attr)
                if spec is not None:
                    method, template, order = spec
                    bound: Handler = types.MethodType(attr, self)
                    found.append((order, method, compile_template(template), bound))
        return [(method, pattern, fn) for _o, method, pattern, fn in sorted(found, key=_first)]

    # -- lookups shared by the handlers ----------------------------------------------------

    def repo(self, req: FakeRequest) -> FakeRepo:
        """The repository the path names; 404 when unknown or private to the caller."""
        repo = self.fake.repos.get(f"{req.params['owner']}/{req.params['name']}")
        if repo is None:
            raise HttpError(404, "Not Found")
        if repo.private and (req.login is None or ROLE_RANK[self.role(repo, req.login)] < 1):
            raise HttpError(404, "Not Found")
        return repo

    def role(self, repo: FakeRepo, login: str) -> str:
        return repo.collaborators.get(login, "read" if not repo.private else "none")

    def need(self, repo: FakeRepo, req: FakeRequest, role: str = "write", scope: str = "") -> str:
        """The caller's login, if its role reaches ``role`` and its token may write ``scope``
        (``"a|b"``: either scope is enough).

        Raises:
            HttpError: 401 without a token; 403 when the role or the token's permissions fall
                short, or a GITHUB_TOKEN writes outside its repository.
        """
        who = req.identity
        if who is None:
            raise HttpError(401, "Requires authentication")
        if ROLE_RANK[self.role(repo, who.login)] < ROLE_RANK[role]:
            raise HttpError(403, "Resource not accessible by integration")
        if scope and not any(who.allows(s) for s in scope.split("|")):
            raise HttpError(403, "Resource not accessible by integration")
        if who.repo is not None and who.repo != repo.full_name:
            raise HttpError(403, "Resource not accessible by integration")
        return who.login

    def issue(self, repo: FakeRepo, req: FakeRequest) -> dict[str, Any]:
        issue = repo.issues.get(req.number())
        if issue is None:
            raise HttpError(404, "Not Found")
        return issue

    def pull(self, repo: FakeRepo, req: FakeRequest) -> dict[str, Any]:
        issue = self.issue(repo, req)
        if not issue.get("is_pull"):
            raise HttpError(404, "Not Found")
        return issue

    def paginate(self, req: FakeRequest, items: list[Any]) -> FakeResponse:
        """One page of ``items`` (``page``, ``per_page``) with GitHub's ``Link: rel="next"``."""
        per_page = int(req.query.get("per_page", "30"))
        page = int(req.query.get("page", "1"))
        chunk = items[(page - 1) * per_page : page * per_page]
        headers: dict[str, str] = {}
        if page * per_page < len(items):
            extra = "".join(
                f"&{k}={v}" for k, v in req.query.items() if k not in ("page", "per_page")
            )
            headers["Link"] = (
                f"<{self.fake.api_url}{req.path}?per_page={per_page}"
                f'&page={page + 1}{extra}>; rel="next"'
            )
        return FakeResponse(200, chunk, headers)
