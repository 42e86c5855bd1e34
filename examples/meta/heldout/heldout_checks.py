"""Held-out checks: never in a candidate's workspace, prompt or sandbox."""

import sys

sys.path.insert(0, ".")
which = sys.argv[1]
if which == "slug":
    from slug import slugify

    assert slugify("  Many   Spaces Here ") == "many-spaces-here"
    assert slugify("ABC") == "abc"
else:
    from title import title_case

    assert title_case("the  quick fox") == "The Quick Fox"
