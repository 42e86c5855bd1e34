"""The PyGithub boundary: GitHubClient, its endpoint groups, and the API calls beside it."""
