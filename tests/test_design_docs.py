"""The Kernels page's design-document passages: every catalog reference is described, and each quote is real."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernels.catalog import CATALOG
from kernels.design_docs import DOCS, PASSAGES, passage

SEEDS = Path("/work/shared/seeds")


def test_every_seed_file_the_catalog_names_is_described() -> None:
    named = {f for spec in CATALOG for f in re.findall(r"\d{3}_[0-9a-f]{16}\.txt", spec.design_doc)}
    assert named and named <= set(DOCS)
    for spec in CATALOG:
        if re.search(r"\d{3}_[0-9a-f]{16}\.txt", spec.design_doc):
            found = passage(spec.id)
            assert found is not None, spec.id
            assert found[0].file in spec.design_doc, spec.id
    assert passage("cublas") is None


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed documents are not on this machine")
def test_quotes_are_in_the_documents() -> None:
    for kernel, p in PASSAGES.items():
        text = (SEEDS / p.doc).read_text()
        flat = re.sub(r"\$([^$]*)\$", r"\1", text).replace("\\times", "×").replace(" × ", "×").replace("**", "")
        for part in p.quote.split(" / "):
            assert part in flat, (kernel, part)


def test_every_passage_has_its_quote_and_section_in_english() -> None:
    for kernel, p in PASSAGES.items():
        for text in (p.english, p.section, p.gist):
            assert text and not re.search(r"[\u3000-\u9fff]", text), (kernel, text)
        assert re.search(r"[\u3000-\u9fff]", p.quote), kernel  # the original stays as written
