"""Arabic: the conversation's rules and built-in texts.

Words are written as Arabic writes them; the rules compare them after
``normalize(…, "ar")`` (hamza forms of alef, teh marbuta, alef maksura and
a Persian yeh or kaf folded, vowel marks removed). Arabic attaches "and"
(و) and the article (ال) to the next word: "وماذا" (and what), "هذا البلد"
(this country).
"""

from __future__ import annotations

from chat.languages.base import NEVER, Language, pattern, phrases, words

CODE = "ar"

_SMALL_TALK_PHRASES = (
    r"مرحبا(?:\s+بك)?|أهلا(?:\s+وسهلا)?|السلام\s+عليكم|سلام(?:\s+عليكم)?|صباح\s+الخير|مساء\s+الخير|"
    r"صباح\s+النور|مساء\s+النور|(?:شكرا|شكرًا)(?:\s+(?:جزيلا|لك|لكم|كثيرا))?|ألف\s+شكر|مشكور|تسلم|"
    r"مع\s+السلامة|إلى\s+اللقاء|وداعا|حسنا|تمام|ممتاز|رائع|جميل|فهمت|كيف\s+حالك|كيف\s+الحال"
)

LANGUAGE = Language(
    code=CODE,
    name="Arabic",
    # Not "هو", "هي": "ما هي…" is "what is…".
    anaphora=words(
        """هم هن هما هذا هذه ذلك تلك هؤلاء أولئك هناك هنا نفس نفسه نفسها الآخر الأخرى أخرى
        آخر ذاك مثله مثلها""",
        CODE,
    ),
    continuations=words(
        """و أيضا ثم لكن أو إذن وماذا وكيف وهل وما ومن ولماذا وأين ومتى وكم وبالنسبة بالنسبة
        وأيضا وإذا""",
        CODE,
    ),
    continuation_phrases=phrases(("ماذا عن", "وماذا عن", "ما عن", "و ماذا"), CODE),
    kinds=words(
        """ممثل ممثلة مغني مغنية لاعب فنان مؤلف كاتب ملحن مخرج شخص ملك ملكة رئيس وزير بلد دولة ولاية
        مدينة بلدة محافظة منطقة أمة جزيرة نهر بحيرة جبل محيط بحر شركة سلسلة مطعم علامة منتج طراز جهاز
        منصة خدمة تطبيق لغة حيوان سلالة نوع نبات فريق نادي فرقة برنامج مسلسل موسم حلقة فيلم كتاب رواية
        أغنية ألبوم لعبة ملعب حرب معركة إعصار عاصفة علم صندوق بطاقة سند سهم حساب سياسة خطة سيارة مركبة
        مدرسة جامعة شخصية حدث مهرجان جائزة""",
        CODE,
    ),
    plural_suffixes=("ات",),
    # The kind is the word after the demonstrative, its article (ال) aside.
    pointer=pattern(r"\b(هذا|هذه|ذلك|تلك|هؤلاء|أولئك)\s+()(?:ال)?([^\W\d_]+)", CODE),
    articles=frozenset(),
    pinned=NEVER,
    proper_name=NEVER,
    question_start=pattern(
        r"^\s*(?:و|ف)?(?:هل|ما|ماذا|من|متى|أين|كيف|لماذا|لم|كم|أي|أيّ|اشرح|صف|أخبرني)\b", CODE
    ),
    small_talk=pattern(
        rf"^(?:(?:{_SMALL_TALK_PHRASES})(?:\s+(?:مرة\s+أخرى|للجميع|جميعا))?[\s!.,;:?)(\-~*^\u060c\u061b\u061f]*)+$",
        CODE,
    ),
    stop_words=words(
        """في على إلى عن من ما ماذا لماذا متى أين كيف كم هل التي الذي الذين اللذان اللتان هذا هذه ذلك
        تلك هو هي هم هن أنا نحن أنت أنتم كان كانت يكون تكون كانوا لم لن لا قد ثم أن إن أو أم مع عند
        بين حتى كل بعض غير إذا لكن بل ليس منذ حيث أيضا لقد و ف ب ل""",
        CODE,
    ),
    no_answer_text=(
        "لا تذكر مستندات مساحة العمل هذه شيئًا عن ذلك. جرّب طرح السؤال بكلمات أخرى، أو اسأل عن موضوع تتناوله."
    ),
    small_talk_text="مرحبًا! اسألني أي شيء عن مستندات مساحة العمل هذه.",
    no_documents_text=(
        "لا توجد مستندات في مساحة العمل هذه بعد، لذا لا يوجد ما يمكن الإجابة منه. "
        "اسأل مرة أخرى بعد رفع المستندات وتجهيزها."
    ),
    not_found_text="لم أجد إجابة عن هذا في مستندات مساحة العمل.",
    which_one="أيّها تقصد؟",
    form_title="أيّها تقصد؟",
    safe_reply="لا يمكنني تقديم هذه الإجابة هنا. أُحيل سؤالك إلى أحد أعضاء فريقنا وسيتابعه معك.",
    fallback_text=(
        "عذرًا، لم أتمكن هذه المرة من إعداد إجابة مناسبة. يُرجى المحاولة مرة أخرى أو إعادة صياغة السؤال."
    ),
)
