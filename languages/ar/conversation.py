"""Arabic: the conversation's rules (chat/services/turn/).

Words are written as Arabic writes them and compared after Arabic's
folding (languages/ar/letters.py: hamza forms of alef, teh marbuta, alef
maksura and a Persian yeh or kaf folded, vowel marks removed).
"""

from __future__ import annotations

from languages.ar.letters import FOLDING
from languages.base import NEVER, Conversation, pattern, phrases, words

_SMALL_TALK_PHRASES = (
    r"مرحبا(?:\s+بك)?|أهلا(?:\s+وسهلا)?|السلام\s+عليكم|سلام(?:\s+عليكم)?|صباح\s+الخير|مساء\s+الخير|"
    r"صباح\s+النور|مساء\s+النور|(?:شكرا|شكرًا)(?:\s+(?:جزيلا|لك|لكم|كثيرا))?|ألف\s+شكر|مشكور|تسلم|"
    r"مع\s+السلامة|إلى\s+اللقاء|وداعا|حسنا|تمام|ممتاز|رائع|جميل|فهمت|كيف\s+حالك|كيف\s+الحال"
)

CONVERSATION = Conversation(
    # Not "هو", "هي": "ما هي…" is "what is…".
    anaphora=words(
        """هم هن هما هذا هذه ذلك تلك هؤلاء أولئك هناك هنا نفس نفسه نفسها الآخر الأخرى أخرى
        آخر ذاك مثله مثلها""",
        FOLDING,
    ),
    continuations=words(
        """و أيضا ثم لكن أو إذن وماذا وكيف وهل وما ومن ولماذا وأين ومتى وكم وبالنسبة بالنسبة
        وأيضا وإذا""",
        FOLDING,
    ),
    continuation_phrases=phrases(("ماذا عن", "وماذا عن", "ما عن", "و ماذا"), FOLDING),
    kinds=words(
        """ممثل ممثلة مغني مغنية لاعب فنان مؤلف كاتب ملحن مخرج شخص ملك ملكة رئيس وزير بلد دولة ولاية
        مدينة بلدة محافظة منطقة أمة جزيرة نهر بحيرة جبل محيط بحر شركة سلسلة مطعم علامة منتج طراز جهاز
        منصة خدمة تطبيق لغة حيوان سلالة نوع نبات فريق نادي فرقة برنامج مسلسل موسم حلقة فيلم كتاب رواية
        أغنية ألبوم لعبة ملعب حرب معركة إعصار عاصفة علم صندوق بطاقة سند سهم حساب سياسة خطة سيارة مركبة
        مدرسة جامعة شخصية حدث مهرجان جائزة""",
        FOLDING,
    ),
    plural_suffixes=("ات",),
    # The kind is the word after the demonstrative, its article (ال) aside.
    pointer=pattern(r"\b(هذا|هذه|ذلك|تلك|هؤلاء|أولئك)\s+()(?:ال)?([^\W\d_]+)", FOLDING),
    articles=frozenset(),
    pinned=NEVER,
    proper_name=NEVER,
    question_start=pattern(
        r"^\s*(?:و|ف)?(?:هل|ما|ماذا|من|متى|أين|كيف|لماذا|لم|كم|أي|أيّ|اشرح|صف|أخبرني)\b", FOLDING
    ),
    small_talk=pattern(
        rf"^(?:(?:{_SMALL_TALK_PHRASES})(?:\s+(?:مرة\s+أخرى|للجميع|جميعا))?[\s!.,;:?)(\-~*^\u060c\u061b\u061f]*)+$",
        FOLDING,
    ),
    stop_words=words(
        """في على إلى عن من ما ماذا لماذا متى أين كيف كم هل التي الذي الذين اللذان اللتان هذا هذه ذلك
        تلك هو هي هم هن أنا نحن أنت أنتم كان كانت يكون تكون كانوا لم لن لا قد ثم أن إن أو أم مع عند
        بين حتى كل بعض غير إذا لكن بل ليس منذ حيث أيضا لقد و ف ب ل""",
        FOLDING,
    ),
    comparisons=words("قارن مقارنة الفرق فرق الاختلاف كلاهما كلها جميع الأخرى الآخر", FOLDING),
)
