import math

import numpy as np
import pytest
from matplotlib.image import imread

from ctxprobe.evals.compare.stats import clopper_pearson
from ctxprobe.evals.records.record import ErrorKind
from ctxprobe.evals.report.heatmap import heatmap_grids, write_heatmaps
from tests.evals.factories import make_record

SINGLE = {"variant": "single", "value_kind": "number"}


def records():
    """niah single over depths 0/50/100 x 4K/32K/1m: accuracy falls with length; the 1m prompts at
    depth 100 were all rejected. One recall cell."""
    recs = []
    for j, ctx in enumerate((4096, 32768, 1_000_000)):
        for depth in (0.0, 50.0, 100.0):
            if ctx == 1_000_000 and depth == 100.0:
                recs += [
                    make_record(error=ErrorKind.rejected_too_long, context_tokens=ctx, depth=depth, params=SINGLE)
                    for _ in range(3)
                ]
                continue
            recs += [make_record(i < 10 - 3 * j, context_tokens=ctx, depth=depth, params=SINGLE) for i in range(10)]
    recs.append(make_record(error=ErrorKind.timeout, context_tokens=32768, depth=50.0, params=SINGLE))
    recs.append(make_record(True, family="recall", params={"kind": "hex"}))
    return recs


def test_grid_matrix():
    grids = heatmap_grids(records())
    assert sorted(grids) == ["niah", "recall"]
    (grid,) = grids["niah"]
    assert grid.depths == [0.0, 50.0, 100.0] and grid.contexts == [4096, 32768, 1_000_000]
    expected = np.array([[1.0, 0.7, 0.4], [1.0, 0.7, 0.4], [1.0, 0.7, np.nan]])
    np.testing.assert_allclose(grid.accuracy, expected)
    assert grid.n.tolist() == [[10, 10, 10], [10, 10, 10], [10, 10, 0]]
    assert grid.errors.tolist() == [[0, 0, 0], [0, 1, 0], [0, 0, 3]]
    assert (grid.lo[0, 1], grid.hi[0, 1]) == pytest.approx(clopper_pearson(7, 10))
    assert math.isnan(grid.lo[2, 2])
    assert grid.error_kinds == {"rejected_too_long": 3, "timeout": 1}


def test_write_heatmaps_png(tmp_path):
    paths = write_heatmaps(records(), tmp_path / "plots", title="test-model")
    assert [p.name for p in paths] == ["heatmap_niah.png", "heatmap_recall.png"]
    image = imread(paths[0])
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 300
    assert image.std() > 0.05  # something was drawn


def test_one_panel_per_variant(tmp_path):
    recs = records() + [
        make_record(False, params={"variant": "multikey", "value_kind": "uuid"}, depth=d) for d in (0.0, 100.0)
    ]
    grids = heatmap_grids(recs)["niah"]
    assert [g.variant for g in grids] == ["variant=multikey, value_kind=uuid", "variant=single"]
    assert grids[0].accuracy.tolist() == [[0.0], [0.0]]
    (path, *_) = write_heatmaps(recs, tmp_path, title="")
    assert imread(path).shape[0] > imread(write_heatmaps(records(), tmp_path / "one", title="")[0]).shape[0]


def test_a_heatmap_showing_the_same_is_not_drawn_again(tmp_path, monkeypatch):
    from ctxprobe.evals.report import heatmap

    first = write_heatmaps(records(), tmp_path, title="m")
    before = {p: p.read_bytes() for p in first}
    drawn = []
    real = heatmap.plot_family
    monkeypatch.setattr(heatmap, "plot_family", lambda *a, **k: drawn.append(a[0][0].family) or real(*a, **k))
    assert write_heatmaps(records(), tmp_path, title="m") == first and drawn == []
    assert {p: p.read_bytes() for p in first} == before
    write_heatmaps(records(), tmp_path, title="another title")  # what a PNG shows changed: drawn again
    changed = [*records()[:-1], make_record(False, family="recall", params={"kind": "hex"})]
    write_heatmaps(changed, tmp_path, title="another title")
    assert drawn == ["niah", "recall", "recall"]
    (tmp_path / "heatmap_niah.png").write_bytes(b"not a png")
    write_heatmaps(changed, tmp_path, title="another title")
    assert drawn[-1] == "niah" and imread(tmp_path / "heatmap_niah.png").ndim == 3
