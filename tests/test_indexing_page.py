"""The Indexing page inside the app's frame (AppTest, no GPU) and its logic (profiling/app/indexing.py): the
pictures for the ladder's two lessons, the per-instruction and whole-launch predictions, and the predicted
against measured table from the bundled captures, differences spelled out."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kernels.indexing import MODELS, model_for
from profiling.analysis.access import shared_cost
from profiling.analysis.access_table import (
    TILED_STORE_GAP,
    capture_comparisons,
    comparison_frame,
    differences,
    summary_markdown,
)
from profiling.app import indexing
from profiling.shape import Shape

ROOT = Path(__file__).resolve().parent.parent
PAGE = "pages/9_Indexing.py"
S1024 = Shape(1024, 1024, 1024)


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    st.cache_data.clear()


def open_page(kernel: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key="idx_kernel").set_value(kernel).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_tab(at: AppTest, section: str) -> AppTest:
    """The page with its tab `section` open (only the open tab is drawn)."""
    at.session_state[indexing.SECTION_KEY] = section
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def frame_with(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


@pytest.mark.parametrize(
    "kernel,other,title_part",
    [
        ("v1", "v1-coalesced", "v1: 32 sectors, 32 lines per request · v1-coalesced: 1 sector, 1 line per request"),
        ("v1-coalesced", "v1", "v1-coalesced: 1 sector, 1 line per request · v1: 32 sectors, 32 lines per request"),
        ("v3", "v4", "v3: 32 wavefronts (ideal 4), 8-way · v4: 8 wavefronts (ideal 4), 2-way"),
        ("v4", "v3", "v4: 8 wavefronts (ideal 4), 2-way · v3: 32 wavefronts (ideal 4), 8-way"),
    ],
)
def test_the_page_draws_the_pair_and_compares_with_the_captures(kernel: str, other: str, title_part: str) -> None:
    at = open_page(kernel)
    assert at.title[0].value == "Indexing"
    assert at.selectbox(key=f"idx_other_{kernel}").value == other
    assert at.session_state[indexing.SECTION_KEY] == "Matrix view" and not at.dataframe
    matrix, tile = figures(at)  # the matrix view and the block's tile, first and by default
    assert matrix["layout"]["title"]["text"].startswith(f"{kernel} at 1024 x 1024 x 1024")
    assert any(t.get("type") == "heatmap" for t in tile["data"])
    (pair,) = figures(open_tab(at, "Lane by lane"))  # the instruction side by side
    assert pair["layout"]["title"]["text"] == title_part
    assert [a["text"].split(":")[0] for a in pair["layout"]["annotations"][:2]] == [kernel, other]
    per_instruction = frame_with(at, "predicted cost")
    items = indexing.instructions(
        model_for(kernel), indexing.clamped(model_for(kernel), indexing.Selection(kernel, None, S1024, (0, 0), 0, 0))
    )
    assert len(per_instruction) == len(items)
    pd.testing.assert_frame_equal(per_instruction, indexing.instruction_table(items))  # the table drawn before
    launch = frame_with(open_tab(at, "Whole launch"), "per request")
    assert "global loads" in set(launch["family"]) and not figures(at)
    # drawn from shared Arrow tables: the tables themselves, as the page drew them from the frames
    pd.testing.assert_frame_equal(launch, indexing.launch_table(kernel, 1024, 1024, 1024))
    measured = frame_with(open_tab(at, "Predicted against measured"), "measured")
    pd.testing.assert_frame_equal(measured, indexing.measured_table(kernel).drop(columns=["known gap", "kernel"]))
    assert "global load sectors / request" in set(measured["quantity"])
    assert {"H100 full set"} <= set(measured["capture"])
    assert measured["agrees"].all()
    assert any(f"Every compared figure of {kernel} agrees" in s.value.replace("\\", "") for s in at.success)  # as shown


def test_a_difference_is_shown_with_its_size() -> None:
    at = open_tab(open_page("tiled-32"), "Predicted against measured")
    (warning,) = [w.value.replace("\\", "") for w in at.warning]
    assert "differ by more than ±2 % for tiled-32" in warning
    assert "shared store wavefronts / instruction (H100 full set): predicted 1, measured 1.153, +15.3 %" in warning
    assert warning.count("\n- ") == 6  # two figures in three captures
    (note,) = [i.value.replace("\\", "") for i in at.info]
    assert "bank-conflict counter" in note and "timing" in note
    assert not at.success
    measured = frame_with(at, "measured")
    assert not measured["agrees"].all()


def test_cp_async_kernels_say_what_is_not_compared() -> None:
    at = open_page("v8-async")
    assert len(figures(at)) == 2 and len(figures(open_tab(at, "Lane by lane"))) == 1
    open_tab(at, "Predicted against measured")
    assert any("Not compared" in i.value and "cp.async" in i.value.replace("\\", "") for i in at.info)


def test_a_shape_the_kernel_cannot_run_is_one_line() -> None:
    at = open_page("wmma-addmm")
    at.number_input(key="idx_m").set_value(1000).run()
    assert not at.exception
    assert any("multiples of 16" in e.value for e in at.error)


def test_partner_counterpart_and_default_instruction() -> None:
    assert [indexing.partner(k) for k in ("v1", "v3", "v4", "v5", "v2")] == [
        "v1-coalesced",
        "v4",
        "v3",
        "v4",
        "v1-coalesced",
    ]
    assert all(indexing.partner(k) in MODELS and indexing.partner(k) != k for k in MODELS)
    sel = indexing.Selection("v3", "v4", S1024, (0, 0), 0, 0)
    v3 = [a for _, a in indexing.instructions(model_for("v3"), sel)]
    v4 = [a for _, a in indexing.instructions(model_for("v4"), sel)]
    pick = indexing.default_instruction(v3, v4)
    assert (v3[pick].sass, v3[pick].array, v3[pick].category) == ("LDS.128", "aTile", "shared_ld")
    twin = indexing.counterpart(v3, pick, v4)
    assert (twin.sass, twin.array) == ("LDS.128", "aTile")
    assert (shared_cost(v3[pick]).wavefronts, shared_cost(twin).wavefronts) == (32, 8)
    # an instruction the other kernel has no form of has no counterpart
    v1 = [a for _, a in indexing.instructions(model_for("v1"), sel)]
    assert indexing.counterpart(v3, pick, v1) is None


def test_the_selection_moves_inside_the_other_kernels_launch() -> None:
    sel = indexing.Selection("v1", "v3", S1024, (31, 20), 31, 900)
    inside = indexing.clamped(model_for("v3"), sel)
    assert (inside.block, inside.warp, inside.step) == ((7, 7), 7, 127)


def test_the_docs_table_is_what_the_script_writes_now() -> None:
    """docs/indexing-predicted-vs-measured.md is current: regenerate it with `python scripts/indexing_table.py`."""
    rows = capture_comparisons()
    text = (ROOT / "docs" / "indexing-predicted-vs-measured.md").read_text()
    assert text.endswith(summary_markdown(rows))
    assert (
        "| tiled-32 | 4.00 / 4.00 (+0.0 %) | 4.00 / 4.00 (+0.0 %) | 1.20 / 1.20 (+0.1 %) | 1.00 / 1.15 (+15.3 %) **differs** |"
        in text
    )
    frame = comparison_frame(rows)
    gaps = differences(frame)
    # every difference is the tiled kernels' shared stores, and each says what is known of it
    assert set(gaps["kernel"]) == {"tiled-8", "tiled-16", "tiled-32"}
    assert set(gaps["quantity"]) == {
        "shared store wavefronts / instruction",
        "shared store bank conflicts / instruction",
    }
    assert (gaps["known gap"] == TILED_STORE_GAP).all()
    assert len(frame) > 200 and frame[~frame.index.isin(gaps.index)]["agrees"].all()
