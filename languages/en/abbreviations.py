"""Abbreviations a sentence does not end at ("e.g.", "et al.", "Dr.",
"approx."), lower-case and without their last period: a passage is split
into sentences at a period followed by a capital unless the word before it
is one of these (retrieval/units.py). Units written with a period ("mg.")
are among them."""

from __future__ import annotations

from languages.base import words

ABBREVIATIONS = words(
    "e.g i.e et al etc fig figs vs dr mr mrs ms prof no vol approx ca cf resp mg ml kg mmhg dept"
)
