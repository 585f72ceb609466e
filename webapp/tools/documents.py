"""What an uploaded or folder document must be: its name, its text, and the errors about it."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

SUFFIXES = frozenset({".md", ".txt"})
MAX_DOCUMENT_BYTES = 2 * 1024 * 1024
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


class DocumentNotFound(LookupError):
    """No document has that id."""


class ReadOnlyDocument(PermissionError):
    """The document belongs to the knowledge folder: only uploads can be deleted."""


_BINARY = "the file is binary, not text: upload a UTF-8 .md or .txt file"


def validate_text(text: str | bytes) -> str:
    """The text, newlines normalised; ValueError when empty, binary, not UTF-8 or too large."""
    try:
        body = text.decode("utf-8-sig") if isinstance(text, bytes) else text
        size = len(body.encode("utf-8"))
    except UnicodeError as exc:
        binary = isinstance(text, bytes) and b"\x00" in text
        raise ValueError(_BINARY if binary else "the file is not valid UTF-8 text") from exc
    if size > MAX_DOCUMENT_BYTES:
        raise ValueError(f"the document is too large ({size} bytes; limit {MAX_DOCUMENT_BYTES})")
    if "\x00" in body or len(_CONTROL.findall(body)) > max(8, len(body) // 100):
        raise ValueError(_BINARY)
    body = body.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not body.strip():
        raise ValueError("the document is empty")
    return body


MAX_NAME_CHARS = 255


def clean_name(name: str) -> str:
    """The file name part of ``name``; ValueError for a hidden, odd or overlong name.

    Control and format characters (NUL, newlines, bidirectional overrides that make
    ``evil\u202egpj.md`` read as another name) and unpaired surrogates are refused outright.
    """
    if any(unicodedata.category(char) in ("Cc", "Cf", "Cs") for char in str(name)):
        raise ValueError("the file name contains control or format characters")
    filename = str(name).replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not filename or filename.startswith("."):
        raise ValueError("the document needs a file name ending in .md or .txt")
    if len(filename) > MAX_NAME_CHARS:
        raise ValueError(f"the file name is longer than {MAX_NAME_CHARS} characters")
    suffix = Path(filename).suffix.lower()
    if suffix not in SUFFIXES:
        shown = f"'{suffix}'" if suffix else "none"
        raise ValueError(f"unsupported file type ({shown}): upload a .md or .txt file")
    return filename
