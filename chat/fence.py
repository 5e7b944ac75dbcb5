"""The reference fence: the tags that open and close the retrieved passages
in the prompt (chat/prompting.py), and :func:`untrusted`, which keeps any
other text from opening or closing them or imitating a numbered passage."""

from __future__ import annotations

import re

REFERENCE_OPEN = "<reference_passages>"
REFERENCE_CLOSE = "</reference_passages>"

# No text that is not an instruction may open or close the fence...
_FENCE = re.compile(r"<\s*/?\s*reference_passages\b[^>]*>", re.IGNORECASE)
# ...or imitate a numbered passage ("[2] (from: Policy) …").
_PASSAGE_NUMBER = re.compile(r"\[(\s*\d+\s*)\]")


def untrusted(text: str) -> str:
    """Text that is not an instruction — a passage, its title, the question, a
    history message — made unable to open or close the reference fence or to
    imitate a numbered passage: fence tags lose their angle brackets, and
    ``[N]`` becomes ``(N)``. Only the server writes ``[N]`` and the tags."""
    text = _FENCE.sub(lambda m: m.group(0).replace("<", "\u2039").replace(">", "\u203a"), text)
    return _PASSAGE_NUMBER.sub(r"(\1)", text)
