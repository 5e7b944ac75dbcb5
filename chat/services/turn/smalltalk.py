"""Small talk: greetings, thanks and goodbyes get a short reply without sources.

Searching the documents for "hi" finds nothing worth citing, and answering
"thanks" with "the documents don't say" reads as a malfunction. A message
that is nothing but small talk (English and a few common other greetings; a
question about the documents is never small talk, since it has more words
than these phrases) is answered with the workspace's ``small_talk_text``,
``grounding: none``, without retrieval.
"""

from __future__ import annotations

import re

_PHRASES = (
    r"hi+|hello+|hey+|hiya|howdy|yo|greetings|good\s+(?:morning|afternoon|evening|day)|"
    r"thanks?(?:\s+(?:you|u))?(?:\s+(?:so|very)\s+much|\s+a\s+lot|\s+again)?|thank\s*(?:you|u)|thx|ty|cheers|"
    r"many\s+thanks|much\s+appreciated|(?:good)?bye|see\s+(?:you|ya)(?:\s+later)?|take\s+care|"
    r"ok(?:ay)?|k|cool|great|nice|perfect|awesome|got\s+it|sounds\s+good|understood|"
    r"how\s+are\s+you(?:\s+doing)?|what'?s\s+up|sup|"
    r"hallo|bonjour|salut|hola|ciao|merci|danke|gracias|grazie|salam|merhaba"
)
_SMALL_TALK = re.compile(
    rf"^(?:(?:{_PHRASES})(?:\s+(?:there|again|all|everyone|folks|team|bot))?[\s!.,;:?)(\-~*^]*)+$",
    re.IGNORECASE,
)


def is_small_talk(message: str) -> bool:
    """Whether ``message`` is only a greeting, thanks, a goodbye or an acknowledgement."""
    text = message.strip()
    return bool(text) and len(text) <= 80 and _SMALL_TALK.match(text) is not None
