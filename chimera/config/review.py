"""``[tool.chimera.review]``: who reviews an attempt before it is verified."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ReviewConfig(BaseModel):
    """Settings of the manager review.

    Attributes:
        crew: a review crew — a name in ``.chimera.d/crews/`` or a path from the root — that
            reviews every attempt instead of the single manager call (``None``: the manager
            call). Read by the crews session part (:class:`chimera.crews.CrewsPart`).
    """

    model_config = ConfigDict(extra="forbid")

    crew: str | None = Field(default=None, min_length=1)
