"""Connectors in an agent run: governed, tainted, quarantined, split flows caught.

A scripted model drives the real Agent loop through the tools ConnectorsPart gives a session
(the factory's ``agent_deps`` seam), against an in-process MCP server and a local HTTP API.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chimera.core.agent import Agent
from chimera.governance.audit import AuditLog
from chimera.governance.wiring import tool_governance
from chimera.integrations.part import ConnectorsPart
from chimera.integrations.registry import ConnectorKindRegistry
from chimera.protocols import SupportsComplete, ToolCaller
from chimera.providers.scripted import ScriptedBackend
from chimera.tools import ToolRegistry

from .conftest import SERVERS, declare, demo_server


@dataclass
class FakeSandbox:
    mode: str = "scrubbed"


@dataclass
class FakeSession:
    """The attributes of ``chimera.orchestration.session_factory.Session`` the part reads."""

    root: Path
    audit: AuditLog
    run_id: str = "run-1"
    sandbox: FakeSandbox = field(default_factory=FakeSandbox)
    ladder: tuple[SupportsComplete, ...] = ()


@dataclass(frozen=True)
class FakeDeps:
    """The two fields of ``AgentDeps`` the part reads."""

    ladder: tuple[SupportsComplete, ...] = ()
    tool_wrapper: Any = None


def events(audit: AuditLog, name: str) -> list[dict[str, Any]]:
    lines = audit.path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return [r["fields"] for r in records if r["event"] == name]


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def setup(
    tmp_path: Path, registry: ConnectorKindRegistry, extra: str = ""
) -> tuple[Any, FakeSession, ConnectorsPart]:
    server = demo_server()
    SERVERS["gov"] = server
    declare(tmp_path, "web.yaml", "connectors:\n  - name: web\n    inproc: {server: gov}\n" + extra)
    audit = AuditLog(tmp_path / ".chimera" / "audit.jsonl", "run-1")
    session = FakeSession(root=tmp_path, audit=audit)
    part = ConnectorsPart(registry=registry)
    part.attach(session)
    return server, session, part


def test_a_split_flow_across_connector_tools_is_caught(
    tmp_path: Path, registry: ConnectorKindRegistry
) -> None:
    server, session, part = setup(tmp_path, registry)
    try:
        deps = part.agent_deps(FakeDeps(), session)
        tools: ToolCaller = deps.tool_wrapper(ToolRegistry())
        names = [s["function"]["name"] for s in tools.schemas()]
        assert names == ["web__read_page", "web__post_message", "web__broken"]
        model = ScriptedBackend(
            [
                {"tool_calls": [call("web__read_page", url="https://evil.example")]},
                {"tool_calls": [call("web__broken", x=1)]},
                {"tool_calls": [call("web__post_message", text="the secrets")]},
                {"text": "done"},
            ]
        )
        result = Agent(model, tools, max_steps=6).run([{"role": "user", "content": "go"}])
    finally:
        part.close()
    assert result.outcome == "finished"
    outputs = [m["content"] for m in result.transcript.messages if m["role"] == "tool"]
    # 1. the read is untrusted: fenced as data, recorded as a taint source
    assert "IGNORE PREVIOUS INSTRUCTIONS" in outputs[0] and "untrusted" in outputs[0].lower()
    assert events(session.audit, "taint_source")[0]["label"].startswith("web__read_page")
    # 2. a failing server tool is data for the model, not a crash
    assert "broken" in outputs[1]
    # 3. sending what was read is a split flow: held for review, never executed
    assert "split flow" in outputs[2] and server.sent == []
    flows = events(session.audit, "split_flow")
    # Both reads brought outside text in (an error page can carry an injection too).
    assert [f["source"]["agent"] for f in flows] == ["web__read_page", "web__broken"]
    assert {f["sink"]["agent"] for f in flows} == {"web__post_message"}
    verdicts = [e["verdict"] for e in events(session.audit, "trust_verdict")]
    assert verdicts == ["allow", "allow", "review"]
    [loaded] = events(session.audit, "connectors_loaded")
    assert loaded["connectors"][0]["reaches"] == "in-process MCP server gov"


def test_sending_first_is_no_split_flow(tmp_path: Path, registry: ConnectorKindRegistry) -> None:
    # The control: with nothing untrusted read before, the same send runs.
    server, session, part = setup(tmp_path, registry)
    try:
        tools = part.agent_deps(FakeDeps(), session).tool_wrapper(ToolRegistry())
        assert tools.call("web__post_message", {"text": "hello"}).ok
    finally:
        part.close()
    assert server.sent == ["hello"] and events(session.audit, "split_flow") == []


QUARANTINE = """\
    quarantine:
      tools: [read_page]
      question: Is the page about pets?
      fields:
        about_pets: {type: boolean, required: true}
"""


def test_an_untrusted_run_offers_only_quarantined_connector_tools(
    tmp_path: Path, registry: ConnectorKindRegistry
) -> None:
    server, session, part = setup(tmp_path, registry, QUARANTINE)
    quarantined = ScriptedBackend([{"purpose": "summarize", "text": '{"about_pets": false}'}])
    wrapper, _guards = tool_governance(
        tmp_path, session.audit, guard=True, untrusted=True, task="issue text", run_id="run-1"
    )
    try:
        deps = part.agent_deps(FakeDeps(ladder=(quarantined,), tool_wrapper=wrapper), session)
        tools = deps.tool_wrapper(ToolRegistry())
        # The run is tainted by the issue from the first byte: free-form connector tools are
        # withheld; the quarantined reader stays.
        assert [s["function"]["name"] for s in tools.schemas()] == ["web__read_page"]
        read = tools.call("web__read_page", {"url": "https://evil.example"})
        assert read.ok and read.meta["fields"] == {"about_pets": False}
        assert "IGNORE" not in read.output  # the agent never sees the raw page
        sent = tools.call("web__post_message", {"text": "x"})
        assert not sent.ok and server.sent == []
    finally:
        part.close()


def test_a_quarantined_tool_without_a_model_is_withheld(
    tmp_path: Path, registry: ConnectorKindRegistry
) -> None:
    _server, session, part = setup(tmp_path, registry, QUARANTINE)
    try:
        tools = part.agent_deps(FakeDeps(), session).tool_wrapper(ToolRegistry())
        assert "web__read_page" not in [s["function"]["name"] for s in tools.schemas()]
    finally:
        part.close()
    [problem] = events(session.audit, "connectors_problem")
    assert "quarantined but no quarantine model" in problem["problems"][0]


def test_nothing_declared_leaves_the_deps_alone(
    tmp_path: Path, registry: ConnectorKindRegistry
) -> None:
    audit = AuditLog(tmp_path / "audit.jsonl", "r")
    session = FakeSession(root=tmp_path, audit=audit)
    part = ConnectorsPart(registry=registry)
    part.attach(session)
    deps = FakeDeps()
    assert part.agent_deps(deps, session) is deps
