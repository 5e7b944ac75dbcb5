"""What tells a French text (languages/detect.py): its function words (the
elided "l'" among them; words English or German also write are left out),
its accented letters, and its greetings or a question word opening the text
("Pourquoi le ciel est-il bleu ?"). It needs ``MIN_EVIDENCE`` (two function
words, or one and its letters): "PKG-la" or "based on" in an English
abstract is no French.
"""

from __future__ import annotations

from languages.base import Detection, words

DETECTION = Detection(
    function_words=words(
        """le la les un une du de et est en que qui quoi quel quelle quels quelles où comment
        pourquoi quand combien dans pour par sur avec pas ne il elle ils elles sont ce cette ces
        au aux je vous nous se son sa ses qu été être ont mais ou très on l"""
    ),
    letters=frozenset("éèêëàâçîïôûùœ"),
    greetings=words("merci bonjour bonsoir salut coucou revoir"),
    openings=words("comment pourquoi quand combien quel quelle quels quelles où qui"),
)
