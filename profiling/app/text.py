"""User text made safe to show in Markdown (the first line of a message is profiling.errors.first_line)."""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'^])")


def md_escape(text: object) -> str:
    """Backslash-escape every Markdown/HTML-significant character so user text shows literally in st.markdown."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")
