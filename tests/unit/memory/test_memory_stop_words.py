"""Retrieval ignores stop words and filler: an item that shares only "the", "how", "is"...
with a query never reaches the top 5, and BM25 still ranks the words that remain."""

from __future__ import annotations

from pathlib import Path

from chimera.memory.items import Candidate, Tier
from chimera.memory.manager import MemoryManager
from chimera.memory.stopwords import is_ignored
from chimera.memory.store import MemoryStore, fts_query

FILLERS = [
    "It is what it is, and that is the way it was for them.",
    "How do we do this? We do it the way we did it before, as you can see.",
    "There is a thing about the other thing that they should have known.",
    "What is it that you would like to know about this and that?",
    "It was the best of the times, it was the worst of the times.",
    "Please tell me how it is going to be for all of us here.",
    "Is it not the case that the one who is there will be here?",
]
ANSWER = "Integration tests need the Postgres container started via docker compose."


def test_memory_a_stop_word_match_never_enters_the_top_five(tmp_path: Path) -> None:
    mm = MemoryManager(MemoryStore(tmp_path / "m.db"))
    filler_ids = {mm.remember(Candidate(t, Tier.SEMANTIC)).item_id for t in FILLERS}
    answer = mm.remember(Candidate(ANSWER, Tier.SEMANTIC)).item_id
    query = "How is it that the integration tests are started, and what is there to do?"
    found = [i.id for i in mm.recall(query, k=5)]
    assert found == [answer]
    assert not filler_ids & set(found)
    # A query of nothing but function words and filler matches nothing at all.
    assert mm.recall("Please, what is it that the thing is about?", k=5) == []


def test_memory_fts_query_drops_stop_words_and_keeps_content() -> None:
    assert fts_query("How do I run the tests, please?") == '"run" OR "tests"'
    assert fts_query("what is it") == ""
    assert fts_query("what is it", keep_stop_words=True) == '"what" OR "is" OR "it"'
    assert is_ignored("The") and not is_ignored("pytest") and not is_ignored("main")
