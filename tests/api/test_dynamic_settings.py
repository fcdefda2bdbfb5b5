"""DynamicSettingsService: round trip, atomic file, bad files, reload across instances."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from zhiwen.config import Settings
from zhiwen.config.runtime import DynamicSettingsService, dynamic_settings_defaults


@pytest.fixture
def settings(zhiwen_home: Path) -> Settings:
    return Settings(home=zhiwen_home)


def test_defaults_follow_static_settings(zhiwen_home: Path) -> None:
    s = Settings(home=zhiwen_home, retrieval={"rrf_k": 42}, rerank={"enabled": True, "api_key": "k"})
    svc = DynamicSettingsService(s)
    assert svc.get().retrieval.rrf_k == 42 and svc.get().rerank.enabled is True
    assert "api_key" not in dynamic_settings_defaults(s)["rerank"]


def test_round_trip_every_new_rerank_param(settings: Settings) -> None:
    svc = DynamicSettingsService(settings)
    patch = {
        "rerank": {"enabled": True, "model": "/models/bge", "candidates": 30, "batch_size": 4,
                   "score_threshold": 0.3, "fallback": 1, "backend": "remote", "endpoint": "http://x/rerank"},
        "adaptive": {"dynamic_lambda_enabled": True, "dynamic_threshold_enabled": True,
                     "keywords_profile": {"broad": ["盘点"]}},
    }  # fmt: skip
    svc.update(patch)
    again = DynamicSettingsService(settings)  # reads the file
    for section, values in patch.items():
        got = getattr(again.get(), section).model_dump()
        assert {k: got[k] for k in values} == values
    assert again.overrides() == patch


def test_null_removes_override_and_reset(settings: Settings) -> None:
    svc = DynamicSettingsService(settings)
    svc.update({"retrieval": {"rrf_k": 5, "candidates": 20}})
    svc.update({"retrieval": {"rrf_k": None}})
    assert svc.overrides() == {"retrieval": {"candidates": 20}}
    assert svc.get().retrieval.rrf_k == 60
    svc.reset()
    assert svc.overrides() == {} and svc.get().retrieval.candidates == 100


def test_invalid_update_writes_nothing(settings: Settings) -> None:
    svc = DynamicSettingsService(settings)
    svc.update({"retrieval": {"rrf_k": 5}})
    with pytest.raises(ValidationError):
        svc.update({"retrieval": {"rrf_k": 10, "dense_alpha": 2.0}})
    assert svc.get().retrieval.rrf_k == 5
    assert json.loads(svc.path.read_text()) == {"format_version": 1, "retrieval": {"rrf_k": 5}}
    assert not list(svc.path.parent.glob(".dynamic_settings.*"))  # no temp file left behind


def test_other_instance_sees_change(settings: Settings) -> None:
    a, b = DynamicSettingsService(settings), DynamicSettingsService(settings)
    a.update({"rerank": {"enabled": True}})
    assert b.get().rerank.enabled is True
    a.update({"rerank": {"enabled": False}})
    assert b.get().rerank.enabled is False


def test_corrupt_or_stale_file_is_ignored(settings: Settings) -> None:
    path = settings.home / "dynamic_settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    assert DynamicSettingsService(settings).get().retrieval.rrf_k == 60
    path.write_text(json.dumps({"retrieval": {"rrf_k": 9, "candidates": -3, "gone": 1}, "old": {"x": 1}}))
    svc = DynamicSettingsService(settings)
    assert svc.get().retrieval.rrf_k == 9  # the valid override survives
    assert svc.overrides() == {"retrieval": {"rrf_k": 9}}
