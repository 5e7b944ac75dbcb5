"""English stop words of the lexical analysis (languages/analysis.py): the
Snowball project's list (BSD licence), the one PostgreSQL's ``english``
configuration drops, so an English passage loses the words it lost before
the analysis moved to Python. stopwordsiso's English list (1,298 words)
holds "research", "information", "value", "results", "effect" and
"significant", words a scientific question is made of (docs/retrieval.md,
"The lexical analysis")."""

from __future__ import annotations

from languages.base import words

STOP_WORDS = words(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
    hers herself it its itself they them their theirs themselves what which who whom this that these
    those am is are was were be been being have has had having do does did doing a an the and but if or
    because as until while of at by for with about against between into through during before after
    above below to from up down in out on off over under again further then once here there when where
    why how all any both each few more most other some such no nor not only own same so than too very s
    t can will just don should now
    """
)
