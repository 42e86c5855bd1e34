"""Memory that outlives a run.

* :mod:`~chimera.memory.manager`: the :class:`MemoryManager` — working / episodic / semantic /
  persona items, ``remember`` (ADD / UPDATE / DELETE / NOOP, :mod:`~chimera.memory.decide`),
  recall, promotion and forgetting, provenance on every item;
* :mod:`~chimera.memory.store`: the SQLite FTS5 store of record; :mod:`~chimera.memory.embed`:
  optional vectors; :mod:`~chimera.memory.budget`: the one ``ContextBudget``;
* :mod:`~chimera.memory.experience`: the experience buffer; :mod:`~chimera.memory.part`: the
  session part recording every attempt as an episodic item (with why a failure failed), and
  :mod:`~chimera.memory.reflect`: its end-of-run reflection (facts remembered through the
  model-decided ADD / UPDATE / DELETE / NOOP); :mod:`~chimera.memory.stopwords`: what a
  query never matches on;
* :mod:`~chimera.memory.branch`, :mod:`~chimera.memory.replay`,
  :mod:`~chimera.memory.artifact`: the branch store on GitHub and its trust rules.

Core reaches this package only through the ground-floor protocols ``ExperienceStore`` and
``MemoryReader`` (:mod:`chimera.protocols`); tainted items are never rendered as instructions.
"""
