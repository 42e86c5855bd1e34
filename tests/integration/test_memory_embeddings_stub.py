"""The embedding seam: LiteLLM's ``embedding()`` against the OpenAI-compatible stub's vectors,
wired from ``[memory] embedding_model`` (off by default), fused with BM25 in recall."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from chimera.config import ChimeraConfig
from chimera.memory.items import Candidate, Tier
from chimera.memory.part import MemoryPart, configured_embedder
from chimera.testing import OpenAIStubServer

FACT = "Tests run with pytest -n 4."
QUERY = "how many workers does the suite use"
OTHERS = ["Releases are tagged from main.", "Money is stored in cents.", "Docs build with mkdocs."]


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStubServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "stub")
    with OpenAIStubServer(api_key="stub", embedding_dim=4) as server:
        # The paraphrase shares no word with the fact: only the vectors connect them.
        server.add_embedding(FACT, [1.0, 0.0, 0.0, 0.0])
        server.add_embedding(QUERY, [0.9, 0.1, 0.0, 0.0])
        for n, text in enumerate(OTHERS):
            server.add_embedding(text, [0.0, 0.0, 1.0, float(n)])
        yield server


def open_part(tmp_path: Path, config: ChimeraConfig) -> MemoryPart:
    part = MemoryPart()
    part.attach(SimpleNamespace(root=tmp_path, run_id="r1", ladder=(), config=config))
    assert part.manager is not None
    for text in [FACT, *OTHERS]:
        part.manager.remember(Candidate(text, Tier.SEMANTIC))
    return part


def test_memory_vectors_are_off_by_default(tmp_path: Path) -> None:
    assert configured_embedder(ChimeraConfig()) is None
    part = open_part(tmp_path, ChimeraConfig())
    assert part.manager is not None and part.manager.embedder is None
    assert [i.text for i in part.manager.recall(QUERY)] == []  # BM25 alone: no shared word


@pytest.mark.slow  # LiteLLM's import takes seconds
def test_memory_hybrid_recall_with_the_stubs_vectors(
    stub: OpenAIStubServer, tmp_path: Path
) -> None:
    config = ChimeraConfig.model_validate(
        {"memory": {"embedding_model": "openai/embed-stub", "embedding_api_base": stub.api_base}}
    )
    part = open_part(tmp_path, config)
    assert part.manager is not None
    found = part.manager.recall(QUERY, k=2)
    assert found[0].text == FACT
    requests = stub.embedding_requests()
    assert len(requests) == 5  # four items on write, one query
    assert {r.body["model"] for r in requests} == {"embed-stub"}
    assert requests[-1].body["input"] in (QUERY, [QUERY])
