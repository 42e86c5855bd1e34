"""Words a memory query never matches on: English function words and conversational filler.

BM25 already weighs a common word down by its inverse document frequency, but on a small store
"the" or "how" still earns a positive score, so an item that shares nothing with a query but
its function words can fill the top five (the defect this list fixes). Leaving them out of the
query changes nothing else: the FTS5 index keeps every word, and the ranking of the words that
remain is BM25's as before.

The list is the common core of the English stop-word lists of Lucene's ``EnglishAnalyzer``,
Snowball's English list and scikit-learn's ``ENGLISH_STOP_WORDS`` (function words: articles,
pronouns, auxiliaries, prepositions, conjunctions), plus the filler people type into a question
("please", "tell me", "remind", "thing"). Negations ("not", "no", "never") are stop words
here too: FTS5 matches words, so a negation adds no evidence to a match.
Words that carry meaning in a repository ("test", "run", "use", "build", "main") are kept.
"""

from __future__ import annotations

STOP_WORDS = frozenset(
    """
    a about above after again against all almost also am among an and any are aren't as at
    be because been before being below between both but by can cannot could couldn't
    did didn't do does doesn't doing don't down during each either else ever every few for
    from further had hadn't has hasn't have haven't having he her here hers herself him
    himself his how i if in into is isn't it it's its itself just let's many may me might
    more most much must mustn't my myself neither never no nor not now of off on once only
    or other ought our ours ourselves out over own per same shall she should shouldn't so
    some such than that that's the their theirs them themselves then there there's these
    they this those though through thus to too under until up upon us very was wasn't we
    were weren't what what's when where which while who whom whose why will with within
    without won't would wouldn't yet you your yours yourself yourselves
    aren couldn didn doesn don hadn hasn haven isn mustn shouldn wasn weren won wouldn
    """.split()  # noqa: SIM905 - a word list reads as text
)
"""English function words (see the module docstring), with the pieces a word splitter leaves
of their contractions ("don't" → "don")."""

FILLER = frozenset(
    """
    actually again anything anyway basically btw certainly currently definitely do does
    exactly fine get gets getting give go going got guess hey hi hello kind kindly know
    like look looking maybe mean need needs ok okay please probably quite rather really
    recall remember remind reminder say see something sort stuff sure tell thanks thank
    thing things think want wanted way whatever wonder wondering yeah yes
    """.split()  # noqa: SIM905 - a word list reads as text
)
"""Conversational filler in questions ("please remind me what the thing is")."""

IGNORED = STOP_WORDS | FILLER
"""Every word a query leaves out."""


def is_ignored(word: str) -> bool:
    """Whether ``word`` (any case) is a stop word or filler."""
    return word.casefold() in IGNORED


__all__ = ["FILLER", "IGNORED", "STOP_WORDS", "is_ignored"]
