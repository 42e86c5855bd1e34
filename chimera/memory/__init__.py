"""Memory that outlives a run: the experience store (and, to come, the MemoryManager).

Core reaches this package only through the ground-floor protocols ``ExperienceSink`` /
``ExperienceSource`` (:mod:`chimera.protocols`); items carry provenance and tainted items are
never rendered as instructions.
"""
