"""Connectors: MCP servers and OpenAPI documents as governed, tainted agent tools.

Declarations live in ``.chimera.d/connectors/*.yaml`` (:mod:`.loader`); each names one kind
(:mod:`.model`, registered through pluggy: :mod:`.hookspecs`, :mod:`.registry`; built-ins in
:mod:`.kinds`). :class:`~.hub.ConnectorHub` opens them lazily into tools with provider-safe
names; :mod:`.governance` wraps every tool (guard, taint ledger, quarantine, split-flow
monitor); :class:`~.part.ConnectorsPart` plugs it all into the session factory. The ``mcp``
SDK is touched only by :mod:`.mcp_client`, ``openapi-pydantic`` only by :mod:`.openapi`.
"""
