"""``[tool.chimera.heldout]``: requirements the agent never sees (held-out requirements).

Example (``pyproject.toml``)::

    [tool.chimera.heldout]
    dir = "specs-heldout"      # relative to the root (or absolute); keep it out of git

The folder holds spec files like ``specs/``. They are loaded only by acceptance (a card's,
and ``chimera solve``'s verification); the sandbox masks the folder, the tools refuse it, and
no prompt or memory item ever holds its content (:mod:`chimera.core.heldout`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class HeldOutConfig(BaseModel):
    """Settings of held-out requirements.

    Attributes:
        dir: the held-out spec folder, relative to the root or absolute (``None``: none).
            Inside a git repository it must be ignored by git and never committed (the agent
            reads ``.git``); the session refuses to start otherwise.
        required: a missing folder stops the run (default); ``false``: a run where it is
            absent checks none and says so (the Action's agent job, which never holds it).
    """

    model_config = ConfigDict(extra="forbid")

    dir: str | None = Field(default=None, min_length=1)
    required: bool = True
