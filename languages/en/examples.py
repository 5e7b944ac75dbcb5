"""English texts the checks run on (languages/base.py, ``Examples``)."""

from __future__ import annotations

from languages.base import Examples

EXAMPLES = Examples(
    sentences=(
        "Where was coffee first grown?",
        "How long is the warranty?",
        "And for patients over 75?",
        "Mutations arise de novo in the germline of the patients.",
        "Coffee was first cultivated in the highlands of Ethiopia and later in Yemen.",
    ),
    small_talk=("hi", "Hello there!", "good morning :)", "Thanks a lot", "ok, thanks!"),
    questions=("How long is the warranty", "Tell me about the warranty", "Is the lid covered"),
    statements=("The warranty covers the heating element.", "Lamins are found in the nuclear membrane."),
    follow_ups=("And for patients over 75?", "What about the toaster?", "Is it safe for children?"),
    pointers=("What is the capital of this country?", "Where was the actor born?"),
    same_term=("refunds", "refund"),
)
