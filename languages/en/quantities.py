"""English words of quantities (chat/quantities.py): a question's "a 75
year old" fits a sentence's "over 70" and not its "under 65"; "65 or
older", "18 to 65 years", "over the age of 60"."""

from __future__ import annotations

from languages.base import Quantities

QUANTITIES = Quantities(
    at_least=("over", "above", "older than", "more than", "greater than", "at least"),
    at_least_after=("over", "older", "above", "more"),
    at_most=("under", "below", "younger than", "less than", "at most", "up to"),
    at_most_after=("under", "younger", "below", "less"),
    conjunctions=("or", "and"),
    before_number=("the age of",),
    unit_words=("years", "year"),
    between=("between",),
    range_joiners=("to", "and"),
    # "a 75 yo", "75 yrs", "aged 75", "75 years old": a number of years.
    unit_aliases={"yo": "year", "yr": "year", "yrs": "year", "years": "year", "aged": "year", "old": "year"},
    units=frozenset(
        {"year", "month", "week", "day", "hour", "minute", "mmhg", "mmol", "percent", "unit", "dose"}
    ),
    plural_suffixes=("s",),
)
