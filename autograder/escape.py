"""A submission's names and messages, made harmless wherever they are shown.

Whatever a submission controls (its entry's name, the names in its zip, the text its code
raises) reaches a TA's terminal, a spreadsheet, Markdown and HTML; one function for each
turns the text into text alone (no escape sequence, formula, link or tag).
"""

from __future__ import annotations

import re
from html import escape as html_escape

SURROGATE = re.compile("[\ud800-\udfff]")
# What a spreadsheet reads as the start of a formula (or, for tab and CR, a way to hide one).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~#!&$])")
# A list item, a numbered one, or the line under a heading, when it starts a line.
MARKDOWN_LINE_START = re.compile(r"^(\s*\d*)([-+=.)])")
# What a linkifying renderer (GitHub's, markdown-it's linkify) could take for an address: a mail
# address or mention, a scheme (`https:/`, `mailto:x`) or `//`, a domain (`www.x`, `evil.com`;
# a dot before `_` too, so that `Value.__mul__` looks as `Value.tanh` does).
ADDRESS = re.compile(r"[@＠]|:(?:/|[^\W\d_])|//|[.。．｡][^\W\d]")
WHITESPACE = re.compile(r"(\s+)")
BACKTICKS = re.compile(r"`+")
SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def clean(text: str) -> str:
    """Text that UTF-8 can hold: a byte of a file name that was not UTF-8 (which Python keeps
    as a lone surrogate) becomes `\\xNN`, and any other lone surrogate U+FFFD."""
    def replace(match: re.Match) -> str:
        code = ord(match[0])
        return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"
    return SURROGATE.sub(replace, text)


def printable(text: str, keep: str = "") -> str:
    """`text` with every character a terminal would act on or hide (control characters,
    bidirectional overrides, invisible ones) written as an escape, but those of `keep`."""
    text = clean(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == " " or ch in keep else escaped(ch) for ch in text)


def escaped(ch: str) -> str:
    """The escape a Python string literal would write for the character `ch`: `\\n`, `\\x1b`, ..."""
    code = ord(ch)
    return SHORT_ESCAPES.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                                     else f"\\U{code:08x}")


def csv_cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: one that would start a formula gets a leading `'`."""
    return "'" + text if text.startswith(FORMULA_START) else text


def markdown(text: str, starts_line: bool = False) -> str:
    """One line of Markdown that reads as `text` and nothing more: no link, image, tag, emphasis
    or code of the submission's making, and where the text `starts_line`, no list or heading.
    A word a renderer could take for an address is a code span, where nothing is linked."""
    words = [code_span(word) if ADDRESS.search(word) else MARKDOWN_SPECIAL.sub(r"\\\1", word)
             for word in WHITESPACE.split(printable(text))]
    text = "".join(words)
    return MARKDOWN_LINE_START.sub(r"\1\\\2", text) if starts_line else text


def code_span(word: str) -> str:
    """`word` as Markdown code spans, its `|` escaped between them (a table's cell ends at a bare
    `|`, even inside a code span), each fenced by more backticks than it holds in a row."""
    spans = []
    for piece in word.split("|"):
        if not piece:
            spans.append(piece)
            continue
        fence = "`" * (max(map(len, BACKTICKS.findall(piece)), default=0) + 1)
        pad = " " if piece.startswith("`") or piece.endswith("`") else ""
        spans.append(f"{fence}{pad}{piece}{pad}{fence}")
    return "\\|".join(spans)


def html(text: str) -> str:
    """`text` as HTML text, one line, with no tag or entity of the submission's making."""
    return html_escape(printable(text))
