def title_case(text: str) -> str:
    """'hello world' -> 'Hello World': every word capitalised, single spaces."""
    raise NotImplementedError
