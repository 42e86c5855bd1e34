"""Project runs: the ProjectOrchestrator, its task graph, goal, run state and acceptance, and
the session that assembles a run for every surface (``solve``, ``run``, ``resume``,
``approve``, ``ask`` and the GitHub Action)."""
