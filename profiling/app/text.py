"""User text made safe to show: the first line of a message, and Markdown-escaped text."""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'^])")


def one_line(text: object, limit: int = 400) -> str:
    """The first non-empty line of a message, cut to `limit` characters."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    first = lines[0] if lines else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def md_escape(text: object) -> str:
    """Backslash-escape every Markdown/HTML-significant character so user text shows literally in st.markdown."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")
