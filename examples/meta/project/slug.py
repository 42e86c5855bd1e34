def slugify(text: str) -> str:
    """'Hello World' -> 'hello-world': lowercase words joined by single hyphens."""
    raise NotImplementedError
