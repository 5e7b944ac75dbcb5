"""Persian texts the checks run on (languages/base.py, ``Examples``)."""

from __future__ import annotations

from languages.base import Examples

EXAMPLES = Examples(
    sentences=(
        "قهوه اولین بار کجا کشت شد؟",
        "و برای بیماران بالای ۷۰ سال؟",
        "چای در اصل از کدام کشور آمده است؟",
        # Typed on an Arabic keyboard (ي and ك): still Persian.
        "چاي در اصل از كدام كشور آمده است؟",
        "سلام",
    ),
    small_talk=("سلام", "سلام، خیلی ممنون!", "مرسی", "ممنونم.", "خداحافظ", "صبح بخیر", "دستت درد نکنه"),
    questions=("کتری چند سال گارانتی دارد", "قهوه اولین بار کجا کشت شد", "آیا گارانتی شامل درب هم می‌شود"),
    statements=("کتری دو سال گارانتی دارد.",),
    follow_ups=("و برای بیماران بالای ۷۰ سال؟", "آیا این دارو برای بیماران کلیوی مشکلی ایجاد نمی‌کند؟"),
    pointers=("پایتخت این کشور کجاست؟", "این بازیگر در چه فیلم‌هایی بازی کرده است؟"),
    same_term=("کتاب‌ها", "کتاب"),
)
