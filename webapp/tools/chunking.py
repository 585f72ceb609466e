"""Splitting a document into search chunks titled with their heading path (``Pool exhaustion >
Diagnosis``), by Markdown heading, else by blank-line paragraph, each at most about
``MAX_CHUNK_CHARS`` characters."""

from __future__ import annotations

import re

MAX_CHUNK_CHARS = 1500
MIN_SECTION_CHARS = 100  # a section body shorter than this is merged into a neighbour
SEPARATOR = "\n\n"

# A heading (``#`` to ``###``) or a code fence, each a whole line.
_MARKERS = re.compile(
    r"^(?:(?P<fence> {0,3}(?:```|~~~)).*"
    r"| {0,3}(?P<level>#{1,3})[ \t]+(?P<name>.+?)(?:[ \t]+#+)?[ \t]*)$",
    re.MULTILINE,
)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def split_sections(text: str, fallback_title: str) -> list[tuple[str, str, str]]:
    """``(title, heading line + body, body)`` per section; fenced code is never a heading."""
    sections: list[tuple[str, str, str]] = []
    levels: list[int] = []  # the open headings, strictly increasing levels
    names: list[str] = []
    title, heading, start = fallback_title, "", 0
    in_fence = False
    for match in _MARKERS.finditer(text):
        fence, hashes, name = match.group("fence", "level", "name")
        if fence is not None:
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        body = text[start : match.start()].strip()
        if heading or body:
            sections.append((title, f"{heading}\n{body}".strip() if body else heading, body))
        while levels and levels[-1] >= len(hashes):
            levels.pop()
            names.pop()
        levels.append(len(hashes))
        names.append(name.strip())
        title, heading, start = " > ".join(names), match.group(0).strip(), match.end()
    body = text[start:].strip()
    if heading or body:
        sections.append((title, f"{heading}\n{body}".strip(), body))
    return sections


def merge_small(sections: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """Heading-only and tiny sections join the previous chunk, or the next when first."""
    chunks: list[tuple[str, list[str]]] = []  # (title, texts joined with blank lines)
    pending: list[str] = []
    for title, section_text, body in sections:
        pending.append(section_text)
        if not body or (not chunks and len(body) < MIN_SECTION_CHARS):
            continue  # nothing to join yet: it waits for the next section, as headings do
        text, pending = SEPARATOR.join(pending), []
        if len(body) < MIN_SECTION_CHARS and _fits(chunks[-1][1], text):
            chunks[-1][1].append(text)
        else:
            chunks.append((title, [text]))
    if pending:
        text = SEPARATOR.join(pending)
        if chunks and _fits(chunks[-1][1], text):
            chunks[-1][1].append(text)
        else:
            chunks.append((sections[0][0], [text]))
    return [(title, SEPARATOR.join(texts)) for title, texts in chunks]


def _fits(texts: list[str], text: str) -> bool:
    return len(SEPARATOR.join([*texts, text])) <= MAX_CHUNK_CHARS


def hard_wrap(text: str, limit: int) -> list[str]:
    """Cut a line longer than ``limit`` at spaces (or anywhere when there is none)."""
    pieces: list[str] = []
    text = text.strip()
    start, end = 0, len(text)
    while end - start > limit:
        cut = text.rfind(" ", start + limit // 2, start + limit)
        if cut <= start:
            cut = start + limit
        pieces.append(text[start:cut].strip())
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if start < end:
        pieces.append(text[start:end])
    return pieces


def split_paragraphs(text: str, limit: int = MAX_CHUNK_CHARS) -> list[str]:
    """Pack blank-line paragraphs into pieces of at most ``limit`` characters."""
    units: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(text.strip()):
        paragraph = paragraph.strip("\n")
        if len(paragraph) <= limit:
            units.append(paragraph)
            continue
        for line in paragraph.split("\n"):
            units.extend(hard_wrap(line, limit) if len(line) > limit else [line])
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        if not unit.strip():
            continue
        if current and size + len(SEPARATOR) + len(unit) > limit:
            pieces.append(SEPARATOR.join(current))
            current = []
        size = size + len(SEPARATOR) + len(unit) if current else len(unit)
        current.append(unit)
    if current:
        pieces.append(SEPARATOR.join(current))
    return pieces


def chunk_with_title(text: str, filename: str) -> tuple[str, list[tuple[str, str]]]:
    """The document's title and its chunks, from one pass over its sections."""
    sections = split_sections(text.replace("\r\n", "\n"), filename)
    chunks = [
        (title, piece) for title, body in merge_small(sections) for piece in split_paragraphs(body)
    ]
    return _title(sections, filename), chunks


def _title(sections: list[tuple[str, str, str]], filename: str) -> str:
    return next((title for title, body, _ in sections if body.startswith("# ")), filename)
