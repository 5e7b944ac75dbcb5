"""HTML: visible text by block, without scripts, styles and page chrome; a
table of several rows (none nested) in groups of rows under its header, as
a CSV's (resources/parsing/tables.py), named by its caption."""

from __future__ import annotations

from bs4 import BeautifulSoup
from bs4.element import (
    CData,
    Comment,
    Declaration,
    Doctype,
    NavigableString,
    PageElement,
    ProcessingInstruction,
    Tag,
)

from resources.parsing.base import PASS_THROUGH, DocumentBuilder, ParsedDocument, ParseError
from resources.parsing.tables import add_table

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
        self.tables = 0

    def flush(self) -> None:
        if self.inline:
            self.builder.add("".join(self.inline))
            self.inline.clear()

    def walk(self, root: Tag) -> None:
        """Depth-first over the tree with a stack of its own, not Python's:
        a page of thousands of nested elements is still a page."""
        stack: list[PageElement | None] = list(reversed(list(root.children)))
        while stack:
            node = stack.pop()
            if node is None:  # the end of a block
                self.flush()
            elif isinstance(node, NavigableString):
                if not isinstance(node, _NOT_TEXT):
                    # Source newlines inside a paragraph are just spaces.
                    self.inline.append(str(node).replace("\n", " "))
            elif isinstance(node, Tag) and self._enter(node):
                if node.name.lower() in _BLOCKS:
                    stack.append(None)  # flushed once its children are done
                stack.extend(reversed(list(node.children)))

    def _enter(self, tag: Tag) -> bool:
        """Handle the tag's own boundary; whether its children are walked."""
        name = tag.name.lower()
        if name in _HEADINGS:
            self.flush()
            self.builder.add(tag.get_text(" ", strip=True), heading=True)
            return False
        if name == "table" and self._table(tag):
            return False
        if name == "br":
            self.inline.append("\n")
            return False
        if name in ("td", "th"):
            # A table row is one block: "cell | cell | cell".
            if "".join(self.inline).strip():
                self.inline.append(" | ")
        elif name in _BLOCKS:
            self.flush()
        return True

    def _table(self, tag: Tag) -> bool:
        """A table of two rows or more, none nested, added as groups of rows
        under its header; whether it was (else it is walked block by block)."""
        rows = [
            [cell.get_text(" ", strip=True) for cell in row.find_all(("td", "th"))]
            for row in tag.find_all("tr")
        ]
        if tag.find("table") is not None or sum(1 for row in rows if any(row)) < 2:
            return False
        self.flush()
        self.tables += 1
        caption = tag.find("caption")
        name = caption.get_text(" ", strip=True) if caption is not None else ""
        add_table(self.builder, name or f"Table {self.tables}", rows)
        return True
