"""What tells a German text (languages/detect.py): its function words
(words English or French also write, such as "was", "in", "an", "die", are
left out), its letters, and its greetings or a question word opening the
text ("Wie kommunizieren Ameisen miteinander?"). It needs ``MIN_EVIDENCE``
(two function words, or one and its letters): a short "Kinder?" could be
any Latin-script language and is left undetermined.
"""

from __future__ import annotations

from languages.base import Detection, words

DETECTION = Detection(
    function_words=words(
        """der das und ist nicht ein eine einen einem einer dem den zu mit von für auf wie wer wo wann welchem
        warum welche welcher welches ich sie es im auch sich wird wurde wurden sind hat haben kann
        aus bei nach oder über zum zur noch dass als ihr ihre sein seine nur wenn gibt muss"""
    ),
    letters=frozenset("äöüß"),
    letter_weight=2,
    greetings=words("danke dank vielen bitte hallo guten tschüss servus moin"),
    openings=words("wie wo wer wann warum wieso weshalb woher wohin welche welcher welches welchem welchen"),
)
