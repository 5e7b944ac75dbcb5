"""Persian: the conversation's rules (chat/services/turn/).

Words are written with Persian letters and compared after Persian's
folding (languages/fa/letters.py: an Arabic yeh or kaf typed for a Persian
one, a zero-width non-joiner between the parts of a word, Persian digits).
"و برای بیماران بالای ۷۰ سال؟" (and for patients over 70?) opens with
"and": a follow-up.
"""

from __future__ import annotations

from languages.base import NEVER, Conversation, pattern, phrases, words
from languages.fa.letters import FOLDING

_SMALL_TALK_PHRASES = (
    r"سلام(?:\s+علیکم)?|درود|وقت\s+بخیر|صبح\s+بخیر|ظهر\s+بخیر|عصر\s+بخیر|شب\s+بخیر|روز\s+بخیر|"
    r"خسته\s+نباشید|(?:خیلی\s+)?(?:ممنون(?:م)?|مرسی|متشکر(?:م)?|سپاس(?:گزارم)?)|تشکر|"
    r"دست(?:ت|تان|\s+شما)\s+درد\s+نکنه|خداحافظ|خدانگهدار|فعلا|بدرود|باشه|اوکی|عالی|خوبه|"
    r"خیلی\s+خوب|حله|فهمیدم|متوجه\s+شدم|چطوری|حالت\s+چطوره|حال\s+شما\s+چطور\s+است"
)

CONVERSATION = Conversation(
    anaphora=words(
        """آن این آنها اینها او وی ایشان آنجا اینجا همان همین چنین چنان آنان اینان دیگری مذکور""",
        FOLDING,
    ),
    continuations=words("و همچنین پس اما ولی یا بعد سپس حالا ضمنا", FOLDING),
    continuation_phrases=phrases(("در مورد", "در باره", "و اگر", "اگر هم", "همین طور", "چه طور"), FOLDING),
    kinds=words(
        """بازیگر خواننده بازیکن هنرمند نویسنده آهنگساز کارگردان شخص فرد پادشاه ملکه رئیس وزیر
        کشور ایالت شهر استان منطقه ملت جزیره رود رودخانه دریاچه کوه اقیانوس دریا شرکت زنجیره
        رستوران برند محصول مدل دستگاه سکو سرویس خدمت برنامه زبان حیوان نژاد گونه گیاه تیم باشگاه
        گروه سریال فصل قسمت فیلم کتاب رمان آهنگ آلبوم بازی ورزشگاه جنگ نبرد طوفان پرچم صندوق کارت
        سهام حساب بیمه سیاست طرح خودرو ماشین مدرسه دانشگاه شخصیت رویداد جشنواره جایزه""",
        FOLDING,
    ),
    plural_suffixes=("های", "ها", "ان"),
    # No article; the kind follows the demonstrative.
    pointer=pattern(r"\b(این|آن|همین|همان)\s+()([^\W\d_]+)", FOLDING),
    articles=frozenset(),
    pinned=NEVER,
    proper_name=NEVER,
    question_start=pattern(
        r"^\s*(?:.*?\b(?:آیا|چه|چی|چرا|چطور|چگونه|کجا|کی|کدام|چند|چقدر|چیست|کیست)\b|"
        r"(?:بگو|بگویید|توضیح\s+بده|توضیح\s+دهید)\b)",
        FOLDING,
    ),
    small_talk=pattern(
        rf"^(?:(?:{_SMALL_TALK_PHRASES})(?:\s+(?:جان|عزیز|دوباره|همگی))?[\s!.,;:?)(\-~*^\u060c\u061b\u061f]*)+$",
        FOLDING,
    ),
    stop_words=words(
        """و در به از که را این آن با برای است بود شد می ها های یک تا هم نیز یا اما ولی اگر پس چه چی
        هر همه خود او ما من تو شما آنها ایشان وی دیگر بر روی زیر بین نه هیچ باید شده شود کرد کند
        کنند کرده دارد دارند داشت هست هستند نیست بوده باشد باشند خواهد اند ای ام اش کجا چرا چگونه
        چطور کدام آیا چیست کیست چند چقدر کی""",
        FOLDING,
    ),
    comparisons=words("مقایسه تفاوت فرق تفاوتها همه هردو دیگری بقیه", FOLDING),
)
