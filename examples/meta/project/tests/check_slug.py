import sys

sys.path.insert(0, ".")
from slug import slugify

assert slugify("Hello World") == "hello-world", slugify("Hello World")
