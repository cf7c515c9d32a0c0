"""The reports' building blocks: files written whole, numbers as the reports write them, and
HTML pages and tables in the kit's one style."""

from __future__ import annotations

import os
import re
import zipfile
from html import escape
from pathlib import Path

from ..escape import html

STYLE = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
td.n{text-align:right}pre{background:#f6f6f6;padding:.8rem;overflow-x:auto;white-space:pre-wrap}
.bad{color:#a00}img{max-width:100%}code{background:#f6f6f6;padding:0 .2rem}pre code{padding:0}"""
INLINE_CODE = re.compile(r"(`+)(.+?)\1")


def put_zip(path: Path, members: dict[str, str]) -> None:
    """Write a zip of text files whole, then put it in place; none where there is nothing to hold
    (and an older one is removed). Names are UTF-8, flagged as such."""
    partial = path.with_name(path.name + ".partial")
    if not members:
        path.unlink(missing_ok=True)
        return
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in sorted(members.items()):
            archive.writestr(zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0)), text.encode("utf-8"))
    os.replace(partial, path)


def put(path: Path, text: str) -> None:
    """Write a file whole, then put it in place of the old one."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8", newline="")
    os.replace(partial, path)


def number(x: float) -> str:
    """A number as the reports write it: `3`, `2.5`."""
    return f"{x:g}"


def page(title: str, body: str) -> str:
    """An HTML page of the kit's style around `body` (already escaped)."""
    return (f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{escape(title)}</title>"
            f"<style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")


def table(header: list[str], rows: list[list[str]], numeric: tuple[int, ...] = ()) -> str:
    """An HTML table; cells are already escaped."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td class='n'>{c}</td>" if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>\n" for row in rows)
    return f"<table><tr>{head}</tr>\n{body}</table>"


def inline(line: str) -> str:
    """One line of a message as HTML, with its `code` as <code>."""
    parts, at = [], 0
    for match in INLINE_CODE.finditer(line):
        parts += [html(line[at:match.start()]), f"<code>{html(match[2].strip())}</code>"]
        at = match.end()
    return "".join(parts) + html(line[at:])
