"""Argument and size validation before any GPU work."""

from __future__ import annotations

import pytest

from kernels.registry import get_kernel
from profiling.errors import InvalidInput
from profiling.gpu.jobs import (
    Job,
    Shape,
    Task,
    build_tasks,
    check_fits,
    device_bytes_needed,
    parse_kernels,
    parse_shape,
    parse_sizes,
    tolerance_for,
)


def test_parse_sizes_and_shapes() -> None:
    assert parse_sizes("1024, 4096") == [Shape(1024, 1024, 1024), Shape(4096, 4096, 4096)]
    assert parse_shape("4096x1000x333") == Shape(4096, 1000, 333)
    assert parse_shape(" 7X1x2 ") == Shape(7, 1, 2)


@pytest.mark.parametrize("text", ["0", "-5", "abc", "1.5", "", " , "])
def test_bad_sizes_say_what_is_wrong(text: str) -> None:
    with pytest.raises(InvalidInput, match="size"):
        parse_sizes(text)


@pytest.mark.parametrize("text", ["4096x1000", "axbxc", "1x2x3x4", "0x5x5", "3000000000x1x1"])
def test_bad_shapes_are_refused(text: str) -> None:
    with pytest.raises(InvalidInput):
        parse_shape(text)


def test_parse_kernels_all_and_duplicates() -> None:
    assert [s.id for s in parse_kernels("v3,v1,v3")] == ["v3", "v1"]
    assert len(parse_kernels("all")) > 5
    with pytest.raises(InvalidInput, match="unknown kernel 'v0'"):
        parse_kernels("v1,v0")


def test_tasks_put_the_reference_first_for_each_shape() -> None:
    tasks = build_tasks([get_kernel("v3"), get_kernel("v1")], [Shape(8, 8, 8), Shape(16, 16, 16)])
    assert [(t.kernel, t.m) for t in tasks] == [
        ("cublas", 8),
        ("v3", 8),
        ("v1", 8),
        ("cublas", 16),
        ("v3", 16),
        ("v1", 16),
    ]


def test_memory_check_refuses_sizes_that_do_not_fit() -> None:
    spec = get_kernel("v5")
    shape = Shape(65536, 65536, 65536)
    assert device_bytes_needed(spec, shape) == 4 * 65536 * 65536 * 4
    with pytest.raises(InvalidInput, match="GiB of GPU memory"):
        check_fits(spec, shape, free_bytes=40 * 2**30)
    check_fits(spec, Shape(4096, 4096, 4096), free_bytes=80 * 2**30)


def test_tolerance_grows_with_k_but_stays_tight() -> None:
    spec = get_kernel("v3")
    small, big = tolerance_for(spec, Shape(8, 8, 8)), tolerance_for(spec, Shape(8, 8, 8192))
    assert small == pytest.approx(1e-5)
    assert small < big < 1e-4


def test_job_round_trips_through_json_dict() -> None:
    job = Job(op="bench", tasks=[Task("v1", 1, 2, 3)])
    assert Job.from_dict(job.to_dict()) == job
