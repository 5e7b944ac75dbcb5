"""Arabic texts the checks run on (languages/base.py, ``Examples``)."""

from __future__ import annotations

from languages.base import Examples

EXAMPLES = Examples(
    sentences=(
        "أين زرعت القهوة لأول مرة؟",
        "من أي بلد جاء الشاي في الأصل؟",
        "ما هي مدة الضمان؟",
        "تأتي كل غلاية كهربائية مع ضمان لمدة سنتين من تاريخ الشراء.",
    ),
    small_talk=("مرحبا", "السلام عليكم", "شكرا جزيلا", "شكراً لك!", "مع السلامة"),
    questions=("ما مدة الضمان", "هل يشمل الضمان الغطاء"),
    statements=("الضمان لمدة سنتين.",),
    follow_ups=(
        "وماذا عن المرضى الذين تزيد أعمارهم على خمسة وسبعين عاما؟",
        "هل هذا الدواء آمن للمرضى الذين يعانون من أمراض الكلى المزمنة؟",
    ),
    pointers=("ما هي عاصمة هذا البلد؟",),
    same_term=("المكتبات", "مكتبة"),
)
