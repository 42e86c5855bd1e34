"""ConnectorsPart: connectors in every agent run, as a session part of the session factory.

The session factory (``chimera.orchestration.session_factory``) takes parts with two methods —
``attach(session)`` once per session and ``agent_deps(deps, session)`` before each agent is
built. This package sits below orchestration and cannot import it, so the shapes it needs are
local protocols (:class:`SessionLike`); the part is duck-typed to the factory's
``SessionPart``.

* ``attach`` reads the declarations from the commit the run starts on (``HEAD`` resolved to
  a SHA at that moment; never the tree the agent writes to), audits what was declared and
  what leaves the machine (``connectors_loaded``), and keeps a lazily-opened hub.
* ``agent_deps`` wraps the agent's tool wrapper: after the native governance (``--guard``,
  ``--untrusted``) the connector tools join under the same guard and taint ledger
  (:func:`~chimera.integrations.governance.connect_tools`), with the session's
  AggregateMonitor, and the first rung of the ladder as the quarantined model.

The servers start when the first agent's tools are built and stop at :meth:`close` (and at
interpreter exit, as a safety net).
"""

from __future__ import annotations

import atexit
import dataclasses
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from chimera.governance.aggregate_monitor import AggregateMonitor
from chimera.integrations.governance import connect_tools
from chimera.integrations.hub import ConnectorHub
from chimera.integrations.loader import ConnectorLoad, load_connectors
from chimera.integrations.model import ConnectorContext
from chimera.integrations.registry import ConnectorKindRegistry
from chimera.protocols import AuditSink, SupportsComplete, ToolCaller

__all__ = ["ConnectorsPart", "SessionLike"]

D = TypeVar("D")


class SessionLike(Protocol):
    """What the part reads of a session (``chimera.orchestration.session.Session``); read-only,
    so a session whose fields are narrower types (an ``AuditLog``) matches."""

    @property
    def root(self) -> Path: ...
    @property
    def run_id(self) -> str: ...
    @property
    def audit(self) -> AuditSink: ...
    @property
    def sandbox(self) -> Any: ...
    @property
    def ladder(self) -> tuple[SupportsComplete, ...]: ...


def _head(root: Path) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


@dataclasses.dataclass
class _Attached:
    hub: ConnectorHub
    monitor: AggregateMonitor
    load: ConnectorLoad


class ConnectorsPart:
    """A session part that gives every agent of the session its declared connectors.

    Args:
        registry: the connector kinds (default: built-ins plus entry points).
        environ: where credentials are read from (default ``os.environ``).
        rev: the commit to read declarations from; ``None`` (default) resolves ``HEAD`` at
            attach; outside a git repository the working tree as it is at attach is read.
    """

    def __init__(
        self,
        *,
        registry: ConnectorKindRegistry | None = None,
        environ: Mapping[str, str] | None = None,
        rev: str | None = None,
    ) -> None:
        self.registry = registry
        self.environ = environ
        self.rev = rev
        self._sessions: dict[int, _Attached] = {}
        atexit.register(self.close)

    def attach(self, session: SessionLike) -> None:
        """Read and audit the declarations (see the module docstring)."""
        root = Path(session.root)
        rev = self.rev or _head(root)
        load = load_connectors(root, rev=rev, registry=self.registry)
        mode: Literal["bwrap", "scrubbed"] = (
            "scrubbed" if getattr(session.sandbox, "mode", "bwrap") == "scrubbed" else "bwrap"
        )
        # The sandbox's hidden paths (held-out requirements) are hidden from servers too.
        hidden = tuple(Path(p) for p in getattr(session.sandbox, "hidden", ()))
        ctx = ConnectorContext(root=root, environ=self.environ, sandbox=mode, hidden=hidden)
        session.audit.append(
            "connectors_loaded",
            rev=rev or "working tree",
            connectors=[
                {"name": d.name, "kind": d.kind.kind_name, "reaches": d.kind.describe()}
                for d in load.connectors
            ],
            problems=[str(p) for p in load.problems],
        )
        monitor = AggregateMonitor(audit=session.audit)  # type: ignore[arg-type]
        self._sessions[id(session)] = _Attached(ConnectorHub(load.connectors, ctx), monitor, load)

    def load(self, session: SessionLike) -> ConnectorLoad | None:
        """The declarations read for ``session`` (``None`` before :meth:`attach`)."""
        attached = self._sessions.get(id(session))
        return attached.load if attached else None

    def agent_deps(self, deps: D, session: SessionLike) -> D:
        """``deps`` with its ``tool_wrapper`` extended by the connector tools (a copy made
        with ``dataclasses.replace``); ``deps`` itself when nothing is declared."""
        attached = self._sessions.get(id(session))
        if attached is None or not attached.hub.decls:
            return deps
        inner: Callable[[Any], ToolCaller] | None = getattr(deps, "tool_wrapper", None)
        ladder: Sequence[SupportsComplete] = getattr(deps, "ladder", ()) or session.ladder

        def wrap(registry: Any) -> ToolCaller:
            native = inner(registry) if inner is not None else registry
            opened = attached.hub.tools()
            caller, problems = connect_tools(
                native,
                opened.tools,
                workspace=Path(session.root),
                audit=session.audit,  # type: ignore[arg-type]
                monitor=attached.monitor,
                quarantine={
                    d.name: d.fields.quarantine for d in attached.hub.decls if d.fields.quarantine
                },
                backend=ladder[0] if ladder else None,
                run_id=session.run_id,
            )
            if opened.problems or problems:
                session.audit.append("connectors_problem", problems=[*opened.problems, *problems])
            return caller

        return dataclasses.replace(deps, tool_wrapper=wrap)  # type: ignore[type-var]

    def finish(self, session: SessionLike, result: object) -> None:
        """The session is over: stop its connectors (the factory's end-of-session hook)."""
        attached = self._sessions.pop(id(session), None)
        if attached is not None:
            attached.hub.close()

    def close(self) -> None:
        """Stop every started connector of every session (idempotent)."""
        attached, self._sessions = list(self._sessions.values()), {}
        for item in attached:
            item.hub.close()
