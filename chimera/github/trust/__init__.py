"""The trust chain: what crosses between jobs, parsed once, and what trusted jobs re-derive."""
