"""Test helpers shipped with Chimera, for its own suite, demos and users' tests.

:class:`~chimera.testing.openai_stub.OpenAIStubServer` is a local OpenAI-compatible chat
completions server on 127.0.0.1 with scripted replies and injectable faults.
"""

from __future__ import annotations

from chimera.testing.openai_stub import (
    OpenAIStubServer,
    RecordedRequest,
    StubFault,
    StubReply,
    StubToolCall,
)

__all__ = ["OpenAIStubServer", "RecordedRequest", "StubFault", "StubReply", "StubToolCall"]
