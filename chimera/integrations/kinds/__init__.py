"""The built-in connector kinds (registered through pluggy, as a third party's would be)."""

from chimera.integrations.kinds.mcp import McpConnector
from chimera.integrations.kinds.openapi import OpenApiConnector

__all__ = ["McpConnector", "OpenApiConnector"]
