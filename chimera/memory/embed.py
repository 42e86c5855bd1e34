"""Optional vector retrieval: an :class:`Embedder` protocol, LiteLLM's ``embedding()`` behind
it, a deterministic hashing embedder, and hybrid ranking with BM25.

Never required: without an embedder the store ranks by FTS5 BM25 alone (CrewAI's most reported
memory complaint is silently needing OpenAI embeddings). With one, BM25 and cosine rankings are
merged by reciprocal rank fusion (Cormack et al. 2009), which needs no score calibration.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from chimera.errors import ChimeraError, MissingExtraError, ProviderError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RRF_K = 60


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of one fixed size.

    Attributes:
        model: names the vector space (vectors of different models are never compared).

    Raises:
        ProviderError: the embedding call failed.
    """

    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class LiteLLMEmbedder:
    """Embeddings through LiteLLM's ``embedding()`` (any provider it supports).

    Args:
        model: a LiteLLM embedding model name (``text-embedding-3-small``,
            ``ollama/nomic-embed-text``...).
        extra: further keyword arguments for ``litellm.embedding`` (``api_base``...).
    """

    def __init__(self, model: str, **extra: Any) -> None:
        self.model = model
        self._extra = extra

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from chimera.providers.lazy_litellm import import_litellm

        litellm = import_litellm("memory embeddings")
        try:
            response = litellm.embedding(model=self.model, input=list(texts), **self._extra)
        except Exception as exc:  # every provider failure maps to one error
            raise ProviderError(f"embedding with {self.model} failed: {exc}") from exc
        data = response["data"] if isinstance(response, dict) else response.data
        return [list(map(float, row["embedding"])) for row in data]


_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """Deterministic feature-hashing embedder (word unigrams and bigrams, signed buckets).

    No model and no network: for tests and offline use. It captures word overlap only, so it
    adds little over BM25 in practice; its purpose is to exercise the vector path exactly.
    """

    def __init__(self, dim: int = 128) -> None:
        self.dim = dim
        self.model = f"hashing-{dim}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for text in texts:
            vec = [0.0] * self.dim
            words = [w.lower() for w in _WORD.findall(text)]
            for feature in (*words, *(" ".join(p) for p in itertools.pairwise(words))):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                vec[bucket] += 1.0 if digest[4] & 1 else -1.0
            out.append(vec)
        return out


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as exc:
        raise MissingExtraError("vector memory retrieval", "eval") from exc
    return numpy


def to_bytes(vec: Sequence[float]) -> bytes:
    """A vector as little-endian float32 bytes (how the store keeps it)."""
    np_ = _numpy()
    return bytes(np_.asarray(vec, dtype="<f4").tobytes())


def _matrix(stored: Sequence[tuple[str, bytes]]) -> Any:
    np_ = _numpy()
    try:
        matrix = np_.stack([np_.frombuffer(blob, dtype="<f4") for _, blob in stored])
    except ValueError as exc:
        raise ChimeraError(f"stored vectors of different sizes: {exc}") from exc
    norms = np_.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np_.where(norms == 0, 1.0, norms)).astype(np_.float32)


def _top(query: Sequence[float], ids: Sequence[str], unit: Any, k: int) -> list[tuple[float, str]]:
    np_ = _numpy()
    q: npt.NDArray[np.float32] = np_.asarray(query, dtype=np_.float32)
    if unit.shape[1] != q.shape[0]:
        raise ChimeraError(f"vector size {unit.shape[1]} != query size {q.shape[0]}")
    # einsum, not BLAS: a threaded BLAS matrix-vector product spins on busy runners.
    scores = np_.einsum("ij,j->i", unit, q / np_.float32(np_.linalg.norm(q) or 1.0))
    k = min(k, len(ids))
    best = np_.argpartition(-scores, k - 1)[:k]
    best = best[np_.argsort(-scores[best], kind="stable")]
    return [(float(scores[i]), ids[int(i)]) for i in best]


def cosine_rank(
    query: Sequence[float], stored: Sequence[tuple[str, bytes]], k: int
) -> list[tuple[float, str]]:
    """The ``k`` stored ids most cosine-similar to ``query``, best first, as ``(cos, id)``.

    Raises:
        ChimeraError: a stored vector's size differs from the query's.
    """
    if not stored or k <= 0:
        return []
    return _top(query, [i for i, _ in stored], _matrix(stored), k)


class VectorIndex:
    """:func:`cosine_rank` with the normalised matrix kept between queries, rebuilt only when
    the store's ``version`` (any write) changes."""

    def __init__(self) -> None:
        self._key: tuple[str, int] | None = None
        self._ids: list[str] = []
        self._unit: Any = None

    def rank(
        self,
        query: Sequence[float],
        load: Callable[[], Sequence[tuple[str, bytes]]],
        *,
        model: str,
        version: int,
        k: int,
    ) -> list[tuple[float, str]]:
        if self._key != (model, version):
            stored = load()
            self._ids = [i for i, _ in stored]
            self._unit = _matrix(stored) if stored else None
            self._key = (model, version)
        if self._unit is None or k <= 0:
            return []
        return _top(query, self._ids, self._unit, k)


def fuse(*rankings: Sequence[str], k: int) -> list[str]:
    """Reciprocal rank fusion of id rankings (each best first): the ``k`` best ids."""
    score: dict[str, float] = {}
    for ranking in rankings:
        for rank, item_id in enumerate(ranking):
            score[item_id] = score.get(item_id, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(score, key=lambda i: (-score[i], i))[:k]


__all__ = [
    "Embedder",
    "HashingEmbedder",
    "LiteLLMEmbedder",
    "VectorIndex",
    "cosine_rank",
    "fuse",
    "to_bytes",
]
