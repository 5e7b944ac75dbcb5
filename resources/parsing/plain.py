"""Plain text and Markdown: paragraphs are separated by blank lines."""

from __future__ import annotations

import re

from resources.parsing.base import DocumentBuilder, ParsedDocument, ParseError
from resources.parsing.detect import decode_text

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def _text(data: bytes) -> str:
    text = decode_text(data)
    if text is None:
        raise ParseError("corrupt_file", "The file is not valid UTF-8 text.")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_plain_text(data: bytes) -> ParsedDocument:
    builder = DocumentBuilder()
    for paragraph in _PARAGRAPH_BREAK.split(_text(data)):
        builder.add(paragraph)
    return builder.build()


def parse_markdown(data: bytes) -> ParsedDocument:
    """Blocks at blank lines; ATX headings (``# Title``) become heading blocks.

    The rest of the Markdown syntax stays in the text: the embedding model
    reads it well enough, and offsets stay simple.
    """
    builder = DocumentBuilder()
    current: list[str] = []
    in_fence = False

    def flush() -> None:
        if current:
            builder.add("\n".join(current))
            current.clear()

    for line in _text(data).split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            current.append(line)
            continue
        if in_fence:
            current.append(line)
            continue
        heading = _ATX_HEADING.match(line)
        if heading:
            flush()
            builder.add(heading.group(2), heading=True)
        elif not line.strip():
            flush()
        else:
            current.append(line)
    flush()
    return builder.build()
