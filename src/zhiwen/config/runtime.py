"""Runtime-editable retrieval knobs: grey-release flags (rerank, adaptive search) without a restart.

The static :class:`~zhiwen.config.Settings` declare every knob (type, default, bounds) and give
the defaults; the models here reuse those declarations. The admin API
(``GET/PUT /admin/settings``) stores *overrides* in ``<home>/dynamic_settings.json`` (atomic
write). Every search reads :meth:`DynamicSettingsService.get`, which re-reads the file when it
changed on disk, so a change applies to the next request, in every worker, and survives a
restart. Types and ranges are validated (strict: ``"60"`` is not an int) before anything is
written; ``null`` for a key removes its override (back to the static default).

Editable keys::

    retrieval: default_mode, fusion, rrf_k, dense_alpha, bm25_weight, dense_weight, candidates, top_k
    rerank:    enabled, backend, model, device, endpoint, candidates, batch_size,
               score_threshold, fallback, timeout_s
    adaptive:  every field of AdaptiveSettings (mmr_*, dynamic_*_enabled, thresholds, keywords_profile)

Example::

    >>> svc = DynamicSettingsService(get_settings())
    >>> svc.update({"rerank": {"enabled": True, "score_threshold": 0.3}})
    >>> svc.get().rerank.enabled
    True
    >>> svc.update({"rerank": {"enabled": None}})      # back to the default (False)
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from zhiwen.config import AdaptiveSettings, RerankKnobs, RetrievalKnobs, Settings
from zhiwen.errors import StoreUnavailable
from zhiwen.fsutil import atomic_write_json, disk_problem
from zhiwen.versions import check_document, current

log = logging.getLogger(__name__)

FILENAME = "dynamic_settings.json"
VERSION_KEY = "format_version"  # the file's layout, beside the sections (zhiwen.versions)

_STRICT = ConfigDict(extra="forbid", strict=True)


# the editable knobs keep the static declaration (type, default, bounds) and are stricter only
# in how a value is given: no coercion ("60" is not an int) and no unknown key
class DynamicRetrieval(RetrievalKnobs):
    model_config = _STRICT


class DynamicRerank(RerankKnobs):
    model_config = _STRICT


class DynamicAdaptive(AdaptiveSettings):
    model_config = _STRICT


class DynamicSettings(BaseModel):
    """The effective runtime knobs (static defaults + admin overrides)."""

    model_config = _STRICT
    retrieval: DynamicRetrieval = Field(default_factory=DynamicRetrieval)
    rerank: DynamicRerank = Field(default_factory=DynamicRerank)
    adaptive: DynamicAdaptive = Field(default_factory=DynamicAdaptive)


SECTIONS: dict[str, type[BaseModel]] = {
    "retrieval": DynamicRetrieval,
    "rerank": DynamicRerank,
    "adaptive": DynamicAdaptive,
}


def dynamic_settings_defaults(settings: Settings) -> dict[str, dict[str, Any]]:
    """The static values of every editable key (what the admin API resets to)."""
    out: dict[str, dict[str, Any]] = {}
    for section, model in SECTIONS.items():
        static = getattr(settings, section).model_dump(mode="json")
        out[section] = {k: static[k] for k in model.model_fields if k in static}
    return out


def _merge(defaults: dict[str, dict[str, Any]], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = {section: dict(values) for section, values in defaults.items()}
    for section, values in overrides.items():
        if isinstance(values, dict) and section in merged:
            merged[section].update(values)
        else:
            merged[section] = values  # let validation report the unknown section / bad type
    return merged


class DynamicSettingsService:
    """Thread-safe holder of the effective :class:`DynamicSettings`, persisted as overrides."""

    def __init__(self, settings: Settings, path: Path | None = None) -> None:
        self.settings = settings
        self.path = Path(path) if path is not None else Path(settings.home) / FILENAME
        self._lock = threading.Lock()
        self._defaults = dynamic_settings_defaults(settings)
        self._overrides: dict[str, dict[str, Any]] = {}
        self._stamp: tuple[int, int, int] | None = None
        self._effective = self._validate(self._defaults)
        self._reload(force=True)

    # -- reading ------------------------------------------------------------------------------
    def get(self) -> DynamicSettings:
        """The effective settings; re-reads the file if another process/worker changed it."""
        self._reload()
        return self._effective

    def overrides(self) -> dict[str, dict[str, Any]]:
        self._reload()
        return json.loads(json.dumps(self._overrides))

    def defaults(self) -> dict[str, dict[str, Any]]:
        return json.loads(json.dumps(self._defaults))

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        # os.replace gives every write a new inode, so two writes in one mtime tick still differ
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _reload(self, force: bool = False) -> None:
        stamp = self._file_stamp()
        if not force and stamp == self._stamp:
            return
        with self._lock:
            overrides: dict[str, dict[str, Any]] = {}
            if stamp is not None:
                try:
                    raw = json.loads(self.path.read_text(encoding="utf-8"))
                    if isinstance(raw, dict):  # an older layout migrated, a newer one refused
                        raw = check_document(raw, "home-settings", self.path)
                        raw.pop(VERSION_KEY, None)
                    overrides = self._clean(raw)
                except (OSError, ValueError) as exc:
                    log.warning("ignoring unreadable %s: %s", self.path, exc)
            self._overrides = overrides
            self._effective = self._validate(_merge(self._defaults, overrides))
            self._stamp = stamp

    def _clean(self, raw: Any) -> dict[str, dict[str, Any]]:
        """Keep only the stored overrides that still validate (a range may have changed)."""
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        kept: dict[str, dict[str, Any]] = {}
        for section, values in raw.items():
            if section not in SECTIONS or not isinstance(values, dict):
                log.warning("ignoring unknown dynamic settings section %r", section)
                continue
            for key, value in values.items():
                candidate = _merge(self._defaults, {section: {key: value}})
                try:
                    self._validate(candidate)
                except ValidationError:
                    log.warning("ignoring invalid stored setting %s.%s=%r", section, key, value)
                    continue
                kept.setdefault(section, {})[key] = value
        return kept

    @staticmethod
    def _validate(data: dict[str, Any]) -> DynamicSettings:
        return DynamicSettings.model_validate(data)

    # -- writing ------------------------------------------------------------------------------
    def update(self, patch: dict[str, Any]) -> DynamicSettings:
        """Apply a partial update ``{section: {key: value}}``; ``None`` removes an override.

        Raises :class:`pydantic.ValidationError` (nothing written) on an unknown key or a bad
        type/range, and :class:`~zhiwen.errors.StoreUnavailable` (503, the settings in force and
        on disk unchanged, no temporary file left) when the file cannot be written: a full or
        read-only disk.
        """
        self._reload()
        with self._lock:
            new: dict[str, Any] = json.loads(json.dumps(self._overrides))
            for section, values in patch.items():
                if not isinstance(values, dict):
                    new[section] = values  # validation reports the bad section
                    continue
                target = new.setdefault(section, {})
                for key, value in values.items():
                    if value is None:
                        target.pop(key, None)
                    else:
                        target[key] = value
            effective = self._validate(_merge(self._defaults, new))
            clean = {s: v for s, v in new.items() if v}
            self._write(clean)
            self._overrides = clean
            self._effective = effective
            self._stamp = self._file_stamp()
            log.info("dynamic settings updated", extra={"overrides": clean})
            return effective

    def reset(self) -> DynamicSettings:
        """Drop every override (back to the static settings)."""
        with self._lock:
            self._write({})
            self._overrides = {}
            self._effective = self._validate(self._defaults)
            self._stamp = self._file_stamp()
            return self._effective

    def _write(self, overrides: dict[str, Any]) -> None:
        """Replace the overrides file atomically; a disk fault leaves the old one in place."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            versioned = {VERSION_KEY: current("home-settings"), **overrides}
            atomic_write_json(self.path, versioned, sort_keys=True)
        except OSError as exc:
            reason = disk_problem(exc)
            log.warning("cannot save runtime settings to %s: %s", self.path, exc)
            raise StoreUnavailable(
                f"cannot write {self.path}: {exc}",
                message=f"设置未保存：{reason}（{self.path.parent}），现有设置保持不变，请检查磁盘后重试",
                data={"path": str(self.path), "errno": exc.errno},
            ) from exc
