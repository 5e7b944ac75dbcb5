"""What tells an Arabic text from a Persian one (languages/detect.py): its
own forms of yeh, alef maksura and kaf (``ي ى ك``), teh marbuta ``ة``
(rare in Persian), its attached article ("ال…") and its function words
("في", "على", "التي", "هذا"), compared with yeh and kaf folded the way the
script reads words (languages/scripts.py), so "أين" (where) stays itself.
"""

from __future__ import annotations

from languages.base import Detection, words
from languages.scripts import YEH_KAF

DETECTION = Detection(
    function_words=words(
        """في على إلى عن التي الذي الذين هذا هذه ذلك تلك كان كانت هو هي هل لم لن قد ثم إن مع
        عند كيف ماذا لماذا متى أين ليس منذ لقد""",
        YEH_KAF,
    ),
    letters=frozenset("\u0629"),
    letter_weight=2,
    forms=frozenset("\u064a\u0649\u0643"),
    prefixes=("\u0627\u0644",),
    min_evidence=0,
)
