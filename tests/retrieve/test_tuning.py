"""Per-KB tuning: tuning.json round trip and cache, merge precedence, the pipeline applying it."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from zhiwen.config import Settings
from zhiwen.config.runtime import DynamicSettingsService
from zhiwen.documents import Chunk, SearchHit
from zhiwen.retrieve.adaptive import effective_params
from zhiwen.retrieve.feedback import FeedbackParams
from zhiwen.retrieve.pipeline import RetrievalPipeline
from zhiwen.retrieve.tuning import (
    KBTuning,
    admin_overrides,
    clear_tuning,
    load_tuning,
    merge_tuning,
    save_tuning,
    tuning_path,
)
from zhiwen.understand.profile import QueryIntent


def test_round_trip_and_reload_on_change(tmp_path: Path) -> None:
    assert load_tuning(tmp_path) is None
    save_tuning(tmp_path, KBTuning(dense_alpha=0.7, bm25_k1=0.9, feedback={"terms": 30}, heldout_score=0.84))
    t = load_tuning(tmp_path)
    assert t is not None and t.dense_alpha == 0.7 and t.feedback == {"terms": 30}
    assert load_tuning(tmp_path) is t  # cached while the file is unchanged
    assert json.loads(tuning_path(tmp_path).read_text("utf-8"))["bm25_k1"] == 0.9
    save_tuning(tmp_path, KBTuning(dense_alpha=0.4))  # another process re-tunes
    st = tuning_path(tmp_path).stat()
    os.utime(tuning_path(tmp_path), ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    again = load_tuning(tmp_path)
    assert again is not None and again.dense_alpha == 0.4 and again.bm25_k1 is None
    assert clear_tuning(tmp_path) and load_tuning(tmp_path) is None and not clear_tuning(tmp_path)


@pytest.mark.parametrize(
    "content",
    ["{not json", '{"dense_alpha": 3}', '{"feedback": {"docs": 0}}', '{"feedback": {"nope": 1}}', "[]"],
)
def test_a_bad_file_means_not_tuned(tmp_path: Path, content: str, caplog: pytest.LogCaptureFixture) -> None:
    tuning_path(tmp_path).write_text(content, "utf-8")
    with caplog.at_level(logging.WARNING):
        assert load_tuning(tmp_path) is None
    assert "ignoring unreadable KB tuning" in caplog.text


def test_values_are_flat_and_only_the_tuned_ones() -> None:
    t = KBTuning(dense_alpha=0.6, feedback={"terms": 10, "enabled": True}, dataset="rgb")
    assert t.values() == {"dense_alpha": 0.6, "feedback.enabled": True, "feedback.terms": 10}
    assert t.provenance()["dataset"] == "rgb"


def _params(**retrieval: Any) -> dict[str, Any]:
    return effective_params(Settings(retrieval=retrieval), QueryIntent.UNKNOWN, top_k=10)  # type: ignore[arg-type]


def test_merge_applies_tuning_over_global_defaults() -> None:
    base = _params(dense_alpha=0.5)
    assert base["bm25"] == {"k1": None, "b": None} and base["feedback"]["enabled"] is True
    t = KBTuning(dense_alpha=0.7, bm25_k1=0.9, bm25_b=0.6, feedback={"terms": 30})
    out = merge_tuning(base, t, kb="news")
    assert out["dense_alpha"] == 0.7 and out["weights"] == [pytest.approx(0.3), 0.7]
    assert out["bm25"] == {"k1": 0.9, "b": 0.6}
    assert out["feedback"]["terms"] == 30 and out["feedback"]["docs"] == base["feedback"]["docs"]
    assert out["tuning"]["kb"] == "news" and out["tuning"]["source"] == "tuning.json"
    assert sorted(out["tuning"]["applied"]) == ["bm25_b", "bm25_k1", "dense_alpha", "feedback.terms"]
    assert base["dense_alpha"] == 0.5  # the input is not modified


def test_admin_overrides_win_over_tuning() -> None:
    out = merge_tuning(
        _params(dense_alpha=0.2), KBTuning(dense_alpha=0.7, feedback={"terms": 5}), admin={"dense_alpha"}
    )
    assert out["dense_alpha"] == 0.2 and out["weights"] == [0.8, 0.2]
    assert out["tuning"]["admin_kept"] == ["dense_alpha"] and out["tuning"]["applied"] == ["feedback.terms"]


def test_rrf_keeps_its_weights() -> None:
    out = merge_tuning(_params(fusion="rrf"), KBTuning(dense_alpha=0.9))
    assert out["weights"] == [1.0, 1.0] and out["dense_alpha"] == 0.9


def test_untuned_kb_is_reported_too() -> None:
    out = merge_tuning(_params(), None, kb="plain")
    assert out["tuning"] == {"kb": "plain", "source": None, "applied": [], "admin_kept": []}


def test_admin_overrides_come_from_the_runtime_service(tmp_path: Path) -> None:
    svc = DynamicSettingsService(Settings(home=tmp_path))
    assert admin_overrides(svc.overrides) == frozenset()
    svc.update({"retrieval": {"dense_alpha": 0.5}})  # equal to the default, but explicitly set
    assert admin_overrides(svc.overrides) == {"dense_alpha"}
    assert admin_overrides(None) == frozenset()


# -- the pipeline ----------------------------------------------------------------------------
class KB:
    """A KB double that records what the pipeline asked for."""

    def __init__(self, path: Path, name: str = "news") -> None:
        self.path, self.name = path, name
        self.calls: list[dict[str, Any]] = []

    def search(self, query: str, **kwargs: Any) -> list[SearchHit]:
        self.calls.append(kwargs)
        return [SearchHit(chunk=Chunk(id="a#0", doc_id="a", text="甲"), score=1.0)]


def test_pipeline_uses_the_kb_tuning_and_reports_it(tmp_path: Path) -> None:
    save_tuning(tmp_path, KBTuning(dense_alpha=0.8, bm25_k1=0.6, feedback={"docs": 5, "enabled": True}))
    kb = KB(tmp_path)
    result = RetrievalPipeline.static(Settings()).search(kb, "问题", top_k=3)  # type: ignore[arg-type]
    call = kb.calls[0]
    assert call["weights"] == pytest.approx((0.2, 0.8))
    assert call["bm25_params"] == (0.6, None)
    assert call["feedback"] == FeedbackParams(docs=5)
    assert result.params["dense_alpha"] == 0.8 and result.params["tuning"]["source"] == "tuning.json"


def test_pipeline_admin_override_wins(tmp_path: Path) -> None:
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    save_tuning(kb_dir, KBTuning(dense_alpha=0.8))
    svc = DynamicSettingsService(Settings(home=tmp_path))
    svc.update({"retrieval": {"dense_alpha": 0.3}})
    kb = KB(kb_dir)
    pipeline = RetrievalPipeline(svc.get, overrides=svc.overrides)
    result = pipeline.search(kb, "问题", top_k=3)  # type: ignore[arg-type]
    assert kb.calls[0]["weights"] == pytest.approx((0.7, 0.3))
    assert result.params["tuning"]["admin_kept"] == ["dense_alpha"]


def test_pipeline_without_tuning_passes_the_global_feedback(tmp_path: Path) -> None:
    kb = KB(tmp_path)
    settings = Settings(retrieval={"feedback": {"enabled": False}, "bm25_k1": 1.1})  # type: ignore[arg-type]
    RetrievalPipeline.static(settings).search(kb, "问题", top_k=3)  # type: ignore[arg-type]
    assert kb.calls[0]["feedback"].enabled is False
    assert kb.calls[0]["bm25_params"] == (1.1, None)


def test_multi_kb_groups_use_each_kb_tuning(tmp_path: Path) -> None:
    from zhiwen.retrieve.pipeline import QueryGroup

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    save_tuning(tmp_path / "a", KBTuning(dense_alpha=0.9))
    kb_a, kb_b = KB(tmp_path / "a", "a"), KB(tmp_path / "b", "b")
    pipeline = RetrievalPipeline.static(Settings())
    try:
        pipeline.search_groups([QueryGroup("g", "问题", [kb_a, kb_b])], top_k=3)  # type: ignore[list-item]
    finally:
        pipeline.close()
    assert kb_a.calls[0]["weights"] == pytest.approx((0.1, 0.9))
    assert kb_b.calls[0]["weights"] == pytest.approx((0.5, 0.5))
