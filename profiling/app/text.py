"""User text made safe to show in Markdown (the first line of a message is profiling.errors.first_line)."""

from __future__ import annotations

import functools
import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'^])")

# GitHub-flavoured Markdown turns bare URLs and addresses into links after escapes are resolved (Streamlit's
# renderer finds `http://`, `https://`, `www.` and `name@host.tld` in the text itself), so no backslash stops them.
# A word joiner (U+2060, invisible, no width) inside each pattern does: "http\u2060://" is no URL to it.
_AUTOLINK = re.compile(r"(?i)(https?|ftp|www)(?=[:.])|(?=@)")
WORD_JOINER = "\u2060"


def md_escape(text: object) -> str:
    """User text as Markdown that shows it literally in st.markdown and every element that renders Markdown:
    every Markdown/HTML-significant character backslash-escaped, and bare URLs and e-mail addresses kept from
    becoming links."""
    text = text if type(text) is str else str(text)
    return _escaped(text) if len(text) <= MEMO_CHARS else _escape(text)


MEMO_CHARS = 2000
"""Texts up to this long are escaped once per process: the pages escape the same labels, names and notes on every
visit (two regular expressions each). Longer ones are rare and not kept."""


def _escape(text: str) -> str:
    unlinked = _AUTOLINK.sub(lambda m: (m.group(1) or "") + WORD_JOINER, text)
    return _MD_SPECIAL.sub(r"\\\1", unlinked).replace("\n", " ")


_escaped = functools.lru_cache(maxsize=4096)(_escape)
