"""Benchmark: MemoryManager.recall at 10,000 items against a bare FTS5 query.

A store of ``--items`` synthetic memories (sentences over a 2,000-word vocabulary, seeded, so
every run builds the same store) is queried ``--queries`` times with 3-6-word queries:

* bare: a minimal FTS5 table of the same texts, ``SELECT rowid ... MATCH ? ORDER BY bm25
  LIMIT k`` with the same match expression (the floor: what SQLite itself costs);
* store: :meth:`MemoryStore.search` (BM25 joined back to the item rows, tier and tombstone
  filters);
* recall: :meth:`MemoryManager.recall` (search plus use counters written back: a commit);
* hybrid (``--embed``): recall with the deterministic hashing embedder (cosine over every
  stored vector in numpy, fused with BM25).

Each figure is the median of the per-query times, measured in the same run; the ratio is
against the bare query.

Usage: ``python bench/memory_retrieval.py [--items 10000] [--queries 300] [--embed]``
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from chimera.memory.embed import HashingEmbedder, to_bytes
from chimera.memory.items import JournalOp, OpKind, Tier, item_id
from chimera.memory.manager import MemoryCaps, MemoryManager
from chimera.memory.store import MemoryStore, fts_query

TS = "2026-01-01T00:00:00+00:00"


def corpus(n: int, rng: random.Random) -> list[str]:
    vocab = [f"w{i}{chr(97 + i % 26)}" for i in range(2000)]
    return [" ".join(rng.choices(vocab, k=rng.randint(8, 24))) for _ in range(n)]


def median_ms(fn: Callable[[str], object], queries: list[str]) -> float:
    times = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--embed", action="store_true", help="also time hybrid recall")
    args = parser.parse_args()
    rng = random.Random(7)
    texts = corpus(args.items, rng)
    queries = [
        " ".join(rng.sample(t.split(), min(len(t.split()), rng.randint(3, 6))))
        for t in rng.sample(texts, args.queries)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp) / "memory.db")
        emb = HashingEmbedder(128) if args.embed else None
        start = time.perf_counter()
        ops = []
        for n, text in enumerate(texts):
            tier = Tier.EPISODIC if n % 2 else Tier.SEMANTIC
            ops.append(
                JournalOp(OpKind.ADD, item_id(tier, text, TS, str(n)), TS, "bench", tier, text)
            )
        store.apply_many(ops)  # as replay applies a commit: one transaction
        if emb is not None:
            for op in ops:
                store.put_vector(op.id, emb.model, to_bytes(emb.embed([op.text])[0]))
        built = time.perf_counter() - start
        bare = sqlite3.connect(str(Path(tmp) / "bare.db"))
        bare.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
        bare.executemany("INSERT INTO t(text) VALUES (?)", ((t,) for t in texts))
        bare.commit()

        def bare_query(q: str) -> object:
            sql = "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?"
            return bare.execute(sql, (fts_query(q), args.k)).fetchall()

        caps = MemoryCaps(max_items=args.items * 2, max_bytes=10**9)
        manager = MemoryManager(store, caps=caps)
        results = {
            "bare FTS5": median_ms(bare_query, queries),
            "MemoryStore.search": median_ms(lambda q: store.search(q, args.k), queries),
            "MemoryManager.recall": median_ms(lambda q: manager.recall(q, k=args.k), queries),
        }
        if emb is not None:
            hybrid = MemoryManager(store, embedder=emb, caps=caps)
            results["recall, hybrid"] = median_ms(lambda q: hybrid.recall(q, k=args.k), queries)
        hits = sum(bool(store.search(q, args.k)) for q in queries)
    print(f"{args.items} items (built in {built:.1f} s), {args.queries} queries, k={args.k}")
    print(f"queries with a hit: {hits}/{args.queries}")
    base = results["bare FTS5"]
    for name, ms in results.items():
        print(f"{name:<22} median {ms:8.3f} ms   ratio {ms / base:6.2f}x")


if __name__ == "__main__":
    main()
