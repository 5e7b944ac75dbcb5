"""HTML: visible text by block, without scripts, styles and page chrome."""

from __future__ import annotations

from bs4 import BeautifulSoup
from bs4.element import CData, Comment, Declaration, Doctype, NavigableString, ProcessingInstruction, Tag

from resources.parsing.base import PASS_THROUGH, DocumentBuilder, ParsedDocument, ParseError

# Not document content: code, styling, and navigation repeated on every page.
_DROPPED = ("script", "style", "noscript", "template", "nav", "header", "footer", "svg", "iframe", "head")
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_BLOCKS = {
    "address", "article", "aside", "blockquote", "caption", "dd", "details", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "form", "hr", "li", "main", "ol", "p", "pre", "section",
    "summary", "table", "tbody", "tfoot", "thead", "tr", "ul", "body", "html",
}  # fmt: skip
_NOT_TEXT = (Comment, CData, Declaration, Doctype, ProcessingInstruction)


def parse_html(data: bytes) -> ParsedDocument:
    try:
        soup = BeautifulSoup(data, "lxml")
    except PASS_THROUGH:
        raise
    except Exception as exc:  # lxml/bs4 raise assorted errors on garbage
        raise ParseError("corrupt_file", "The HTML could not be parsed.") from exc
    for tag in soup.find_all(_DROPPED):
        tag.decompose()
    text = _BlockText()
    text.walk(soup)
    text.flush()
    return text.builder.build()


class _BlockText:
    """The visible text of a tree, one block per paragraph-like element:
    inline text gathers until the next block boundary."""

    def __init__(self) -> None:
        self.builder = DocumentBuilder()
        self.inline: list[str] = []

    def flush(self) -> None:
        if self.inline:
            self.builder.add("".join(self.inline))
            self.inline.clear()

    def walk(self, node: Tag) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if not isinstance(child, _NOT_TEXT):
                    # Source newlines inside a paragraph are just spaces.
                    self.inline.append(str(child).replace("\n", " "))
            elif isinstance(child, Tag):
                self._tag(child)

    def _tag(self, tag: Tag) -> None:
        name = tag.name.lower()
        if name in _HEADINGS:
            self.flush()
            self.builder.add(tag.get_text(" ", strip=True), heading=True)
        elif name == "br":
            self.inline.append("\n")
        elif name in ("td", "th"):
            # A table row is one block: "cell | cell | cell".
            if "".join(self.inline).strip():
                self.inline.append(" | ")
            self.walk(tag)
        elif name in _BLOCKS:
            self.flush()
            self.walk(tag)
            self.flush()
        else:
            self.walk(tag)
