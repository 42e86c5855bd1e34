"""What Chimera writes on issues and PRs: documents, outcome comment, checks, costs, feedback."""
