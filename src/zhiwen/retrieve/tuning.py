"""A knowledge base's tuned retrieval parameters: ``<kb.path>/tuning.json``, written by ``zhiwen tune``.

What a KB may tune: the weighted fusion's dense weight α, BM25's k1/b and the pseudo-relevance
feedback knobs (the fusion method itself moved RGB-zh by ≤ 0.003 once feedback was on, so it
stays global). The file also says where the numbers came from (dataset, the
dev half they were tuned on and the held-out half's score), so ``zhiwen eval`` and the API can
show them.

Precedence, lowest to highest (each layer only sets the keys it names)::

    global settings (defaults, env, .env)
      < the KB's tuning.json
        < admin runtime overrides (``PUT /admin/settings``) that are explicitly set
          < the arguments of one search call (API/CLI/library)

A KB's tuning is more specific than the global defaults, so it wins over them; an admin who
explicitly sets e.g. ``retrieval.dense_alpha`` at runtime means it for every KB (grey release,
emergencies), so that wins over every KB's file. :func:`merge_tuning` applies the file over the
pipeline's parameters and records what was applied in ``params["tuning"]``.

Reads are cached by the file's (mtime, size, inode): a ``zhiwen tune`` in another process applies
to the next search. A missing, unreadable or invalid file means "not tuned" (logged once per
version), never an error on a search.

Example::

    >>> save_tuning(kb.path, KBTuning(dense_alpha=0.7, bm25_k1=0.9, feedback={"terms": 30}))
    >>> load_tuning(kb.path).dense_alpha
    0.7
    >>> params = merge_tuning(effective_params(cfg, intent, 10), load_tuning(kb.path), kb="news")
    >>> params["dense_alpha"], params["tuning"]["applied"]
    (0.7, ['bm25_b', 'bm25_k1', 'dense_alpha', 'feedback.terms'])
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from zhiwen.cache import LRU
from zhiwen.errors import InvalidParameter
from zhiwen.fsutil import atomic_write_json
from zhiwen.retrieve.feedback import FeedbackParams

if TYPE_CHECKING:
    from zhiwen.retrieve.searchable import Searchable

log = logging.getLogger(__name__)

TUNING_FILE = "tuning.json"
#: the retrieval-section keys a KB can tune (admin overrides name them the same way)
FUSION_KEYS = ("dense_alpha",)
BM25_KEYS = ("bm25_k1", "bm25_b")


class KBTuning(BaseModel):
    """The tuned values (None = not tuned, keep the global one) plus where they came from."""

    model_config = ConfigDict(extra="ignore")

    dense_alpha: float | None = Field(None, ge=0.0, le=1.0)
    bm25_k1: float | None = Field(None, ge=0.0, le=10.0)
    bm25_b: float | None = Field(None, ge=0.0, le=1.0)
    #: FeedbackParams fields that were tuned (the rest stay global)
    feedback: dict[str, Any] = Field(default_factory=dict)
    # provenance, shown by `zhiwen eval` and in params["tuning"]
    dataset: str | None = None
    metric: str = "ndcg@10"
    dev_half: str | None = None
    dev_queries: int | None = None
    dev_score: float | None = None
    heldout_half: str | None = None
    heldout_queries: int | None = None
    heldout_score: float | None = None
    baseline_heldout_score: float | None = None
    tuned_at: str | None = None

    @field_validator("feedback")
    @classmethod
    def _valid_feedback(cls, value: dict[str, Any]) -> dict[str, Any]:
        known = set(FeedbackParams.__dataclass_fields__)
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValueError(f"unknown feedback keys: {unknown}")
        try:
            FeedbackParams.from_mapping(value)  # the same range checks as a search's
        except InvalidParameter as exc:
            raise ValueError(exc.message) from exc
        return dict(value)

    def values(self) -> dict[str, Any]:
        """Only the tuned parameters, flat: ``{"dense_alpha": 0.7, "feedback.terms": 30, …}``."""
        out: dict[str, Any] = {
            k: getattr(self, k) for k in (*FUSION_KEYS, *BM25_KEYS) if getattr(self, k) is not None
        }
        out.update({f"feedback.{k}": v for k, v in sorted(self.feedback.items())})
        return out

    def provenance(self) -> dict[str, Any]:
        keys = (
            "dataset",
            "metric",
            "dev_half",
            "dev_queries",
            "dev_score",
            "heldout_half",
            "heldout_queries",
            "heldout_score",
            "baseline_heldout_score",
            "tuned_at",
        )
        return {k: getattr(self, k) for k in keys if getattr(self, k) is not None}


def tuning_path(kb_path: Path | str) -> Path:
    return Path(kb_path) / TUNING_FILE


#: tuning files read, per path: one entry per KB (at most this many; never grow without bound)
TUNING_CACHE_SIZE = 257
# path → (the file's stamp when read, what it said)
_CACHE: LRU[tuple[tuple[int, int, int], KBTuning | None]] = LRU(TUNING_CACHE_SIZE, "kb_tuning")


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def load_tuning(kb_path: Path | str) -> KBTuning | None:
    """The KB's tuning, or None when it has none (or the file is unreadable: logged)."""
    path = tuning_path(kb_path)
    stamp = _stamp(path)
    key = str(path)
    if stamp is None:
        _CACHE.discard(key)
        return None
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    tuning: KBTuning | None
    try:
        tuning = KBTuning.model_validate(json.loads(path.read_text("utf-8")))
    except (OSError, ValueError, ValidationError, InvalidParameter) as exc:
        log.warning("ignoring unreadable KB tuning %s: %s", path, str(exc).splitlines()[0])
        tuning = None
    _CACHE.put(key, (stamp, tuning))
    return tuning


def save_tuning(kb_path: Path | str, tuning: KBTuning) -> Path:
    """Write ``tuning.json`` atomically; the next search (any process) reads it."""
    path = tuning_path(kb_path)
    atomic_write_json(path, tuning.model_dump(mode="json", exclude_none=True))
    return path


def clear_tuning(kb_path: Path | str) -> bool:
    """Remove the KB's tuning (back to the global settings); True when there was one."""
    try:
        tuning_path(kb_path).unlink()
    except FileNotFoundError:
        return False
    return True


def merge_tuning(
    params: dict[str, Any],
    tuning: KBTuning | None,
    *,
    kb: str | None = None,
    admin: set[str] | frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """``params`` (from :func:`~zhiwen.retrieve.adaptive.effective_params`) with ``tuning`` applied.

    ``admin`` names the retrieval keys an admin explicitly overrode at runtime (``dense_alpha``,
    ``feedback.terms``, …): those keep their value. The result says what happened in
    ``params["tuning"]`` = ``{"kb", "applied", "admin_kept", "source"}``.
    """
    out = dict(params)
    applied: list[str] = []
    kept: list[str] = []
    if tuning is not None:
        for key, value in tuning.values().items():
            if key in admin:
                kept.append(key)
                continue
            applied.append(key)
            if key.startswith("feedback."):
                out["feedback"] = {**out["feedback"], key.split(".", 1)[1]: value}
            elif key in BM25_KEYS:
                out["bm25"] = {**out["bm25"], key.removeprefix("bm25_"): value}
            else:
                out[key] = value
        if "dense_alpha" in applied and out["fusion"] != "rrf":
            out["weights"] = [round(1.0 - out["dense_alpha"], 6), out["dense_alpha"]]
    out["tuning"] = {
        "kb": kb,
        "source": "tuning.json" if tuning is not None else None,
        "applied": applied,
        "admin_kept": kept,
        **({"provenance": tuning.provenance()} if tuning is not None else {}),
    }
    return out


def admin_overrides(overrides: Callable[[], Mapping[str, Any]] | None) -> frozenset[str]:
    """Retrieval keys an admin explicitly set at runtime (not just equal to a default).

    ``overrides`` is the runtime settings service's ``overrides`` (the server and the CLI pass
    it to the pipeline); None — static settings, a test's lambda — means no admin overrides.
    """
    if overrides is None:
        return frozenset()
    try:
        retrieval = (overrides() or {}).get("retrieval") or {}
    except Exception as exc:  # a broken overrides file must not fail searches
        log.warning("cannot read runtime overrides: %s", exc)
        return frozenset()
    keys: set[str] = set()
    for key, value in retrieval.items():
        if isinstance(value, dict):
            keys.update(f"{key}.{sub}" for sub in value)
        else:
            keys.add(key)
    return frozenset(keys)


def tuned_params(
    params: dict[str, Any], kb: Searchable, *, admin: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """``params`` with ``kb``'s ``tuning.json`` merged in (see :func:`merge_tuning`)."""
    # a KB keeps its tuning in its directory; a KB without one (a double) is not tuned
    tuning = load_tuning(kb.path) if kb.path is not None else None
    return merge_tuning(params, tuning, kb=kb.name, admin=admin)
