"""``[tool.chimera.run]``: the limits and checkpoints of a project run (``chimera run``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_HIGH_RISK_PATHS = (
    "**/migrations/**",
    "**/migration/**",
    "**/alembic/**",
    "*.sql",
    "deploy/**",
    "**/deploy/**",
    "Dockerfile",
    "**/Dockerfile",
    "docker-compose*.yml",
    "k8s/**",
    "helm/**",
    "terraform/**",
    "**/*.tf",
    "Procfile",
    "fly.toml",
    "app.yaml",
)


class RunConfig(BaseModel):
    """Settings of the ProjectOrchestrator.

    Attributes:
        max_iterations: cards solved (each a full verify-or-revert solve) before stopping.
        max_wall_s: wall-clock seconds before stopping (``None``: no limit).
        high_risk_paths: gitignore-style globs; a card whose diff touches one pauses for a
            human (as does a ``risk: high`` requirement or a deleted file).
        allow_self_approval: let the person who started a run approve it.
        guard: evaluate every tool call with the TrustKernel first (``--guard``).
    """

    model_config = ConfigDict(extra="forbid")

    max_iterations: int = Field(default=20, ge=1)
    max_wall_s: float | None = Field(default=None, gt=0)
    high_risk_paths: list[str] = Field(default_factory=lambda: list(DEFAULT_HIGH_RISK_PATHS))
    allow_self_approval: bool = False
    guard: bool = True
