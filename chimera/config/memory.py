"""``[tool.chimera.memory]``: the memory's optional vector ranking."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class MemoryConfig(BaseModel):
    """Settings of the project's memory.

    Attributes:
        embedding_model: a LiteLLM embedding model (``text-embedding-3-small``,
            ``ollama/nomic-embed-text``, ``openai/<name>`` at an OpenAI-compatible server...).
            Set, recall ranks by BM25 and cosine similarity fused (reciprocal rank fusion);
            ``None`` (the default): BM25 alone, no embedding call ever made. Its benefit over
            BM25 has not been measured with a real embedding model.
        embedding_api_base: the endpoint of the embedding model (``None``: LiteLLM's default
            for its provider, or ``[models] api_base``).
    """

    model_config = ConfigDict(extra="forbid")

    embedding_model: str | None = Field(default=None, min_length=1)
    embedding_api_base: str | None = Field(default=None, min_length=1)
