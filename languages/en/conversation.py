"""English: the conversation's rules (chat/services/turn/), as they were
written and measured (MTRAG-UN, SciFact: docs/prompting.md)."""

from __future__ import annotations

import re

from languages.base import Conversation, pattern, words

# Greetings, thanks, goodbyes and acknowledgements; and greetings of
# languages without a folder of their own, which a Latin-script message is
# answered in English for (another language's greetings are in its folder).
_SMALL_TALK_PHRASES = (
    r"hi+|hello+|hey+|hiya|howdy|yo|greetings|good\s+(?:morning|afternoon|evening|day)|"
    r"thanks?(?:\s+(?:you|u))?(?:\s+(?:so|very)\s+much|\s+a\s+lot|\s+again)?|thank\s*(?:you|u)|thx|ty|cheers|"
    r"many\s+thanks|much\s+appreciated|(?:good)?bye|see\s+(?:you|ya)(?:\s+later)?|take\s+care|"
    r"ok(?:ay)?|k|cool|great|nice|perfect|awesome|got\s+it|sounds\s+good|understood|"
    r"how\s+are\s+you(?:\s+doing)?|what'?s\s+up|sup|"
    r"hola|ciao|gracias|grazie|salam|merhaba"
)

CONVERSATION = Conversation(
    anaphora=words(
        """it its it's they them their theirs this that these those there he him his she her hers
        one ones such same former latter else other another"""
    ),
    continuations=words("and also so but or then"),
    continuation_phrases=("what about", "how about", "what if", "same for", "and if"),
    kinds=words(
        """actor actress singer player artist author writer composer director person king queen president
        minister country state county city town province region nation island river lake mountain ocean sea
        company firm chain restaurant brand product model device platform service app language animal breed
        species plant team club band show series season episode movie film book novel song album game
        stadium war battle hurricane storm flag fund card bond stock account policy plan car vehicle school
        university character event festival award"""
    ),
    plural_suffixes=("s",),
    pointer=pattern(
        r"\b(this|that|these|those|the)\s+((?:[A-Za-z][\w.'\u2019-]*\s+){0,3}?)([A-Za-z][\w'\u2019-]*?)"
        r"(?:'s|\u2019s)?\b"
    ),
    articles=frozenset({"the"}),
    pinned=pattern(r"\s+(?:of|in|from|called|named)\s+\S"),
    proper_name=re.compile(r"\b[A-Z][a-z]+"),
    # Only a question asks about a subject; a statement ("Lamins are found in
    # the nuclear membrane.") is checked, not disambiguated (on SciFact's
    # claims the rule otherwise asked back on 1 claim in 70).
    question_start=pattern(
        r"^\s*(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|"
        r"should|would|will|may|must|has|have|had|tell|explain|describe)\b"
    ),
    small_talk=pattern(
        rf"^(?:(?:{_SMALL_TALK_PHRASES})(?:\s+(?:there|again|all|everyone|folks|team|bot))?[\s!.,;:?)(\-~*^]*)+$"
    ),
    stop_words=words(
        """a an the and or but if then than so of to in on at by for with from as into onto about over
        under is are was were be been being am do does did doing have has had having can could should would
        may might must shall will what which who whom whose when where why how i me my we our you your he him
        his she her it its they them their this that these those there here not no nor any some all each
        every"""
    ),
    indefinites=frozenset({"a", "an", "any", "some", "another"}),
    qualifiers=words(
        """maximum minimum max min maximal minimal highest lowest largest smallest biggest greatest
        longest shortest most least best worst total overall average mean usual normal standard typical
        regular default recommended suggested required allowed permitted prescribed correct right exact
        proper current latest recent previous next first last final initial original main basic full
        daily weekly monthly yearly annual hourly extra additional general official whole entire new old
        common single"""
    ),
    comparisons=words(
        """compare comparison comparing difference differences differ
        versus vs both all each other others"""
    ),
)
