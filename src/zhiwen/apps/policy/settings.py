"""Settings of the policy QA app: the ``policy`` section of the one tree.

The app declares its settings here and adds them to the settings tree as the section
``policy`` (:meth:`zhiwen.config.Settings.section`), read like every other section from
``ZHIWEN_POLICY__<KEY>`` variables and ``.env``. :func:`policy_settings` takes them from the
settings a context carries; :func:`get_policy_settings` from the process-wide settings, until
:func:`reset_policy_settings` (tests change the environment).

Example::

    >>> policy_settings(ctx.settings).rerank_top_n
    20
    >>> PolicySettings(enable_intent_classifier=False).enable_intent_classifier
    False

Variables (and ``.env`` in the working directory): ``ZHIWEN_POLICY__ENABLE_INTENT_CLASSIFIER``,
``ZHIWEN_POLICY__INTENT_CLASSIFIER_TIMEOUT`` (seconds), ``ZHIWEN_POLICY__RERANK_TOP_N``,
``ZHIWEN_POLICY__KB_CONFIG`` (your own KB mapping TOML), ``ZHIWEN_POLICY__VISA_KB`` /
``AIRLINE_KB`` / ``GENERAL_KB`` (KB names overriding the mapping's), …
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from zhiwen.config import Settings, get_settings, reset_settings_cache

SECTION = "policy"  # ZHIWEN_POLICY__*


class PolicySettings(BaseModel):
    """Intent classification, rewrite, dual retrieval and rerank sizes."""

    enable_intent_classifier: bool = True  # off: every question takes single retrieval
    intent_classifier_timeout: float = Field(5.0, gt=0, le=120)  # seconds, the LLM classifier's bound
    rewrite_timeout: float = Field(8.0, gt=0, le=120)  # seconds, the LLM rewrite's bound
    answer_timeout: float | None = Field(None, gt=0, le=600)  # None: the LLM client's own timeout
    rerank_top_n: int = Field(20, ge=1, le=100)  # kept after rerank: rerank_top_n / 2 per group
    max_top_n: int = Field(100, ge=1, le=1000)  # the largest top_n a request may ask for
    # the offline embedding classifier accepts its best label from this cosine similarity on;
    # None: calibrated per embedder (intent.DEFAULT_THRESHOLDS)
    embedding_threshold: float | None = Field(None, ge=-1.0, le=1.0)
    kb_config: str | None = None  # path of a KB mapping TOML; None: the one shipped with the app
    visa_kb: str | None = None  # KB names; None: the mapping's names
    airline_kb: str | None = None
    general_kb: str | None = None
    context_chars: int = Field(600, ge=100, le=5000)  # per source, in the LLM prompt
    source_chars: int = Field(500, ge=50, le=5000)  # per source, in the response
    # vectors of the app's KBs at setup: None follows the app's declaration (KBSpec.vectors),
    # true / false overrides it (ZHIWEN_POLICY__VECTORS=false: text indexes only)
    vectors: bool | None = None


def policy_settings(settings: Settings) -> PolicySettings:
    """The policy section of ``settings`` (``ctx.settings`` in a request)."""
    return settings.section(SECTION, PolicySettings)


def get_policy_settings() -> PolicySettings:
    """The policy section of the process-wide settings (environment and ``.env`` read once)."""
    return policy_settings(get_settings())


def reset_policy_settings() -> None:
    """Forget the process-wide settings, this section with them (tests change the environment)."""
    reset_settings_cache()


__all__ = ["SECTION", "PolicySettings", "get_policy_settings", "policy_settings", "reset_policy_settings"]
