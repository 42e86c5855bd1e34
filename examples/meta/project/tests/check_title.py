import sys

sys.path.insert(0, ".")
from title import title_case

assert title_case("hello world") == "Hello World", title_case("hello world")
