"""Settings of the house-buying advisor: the ``advisor`` section of the one tree.

Read like every other section, from ``ZHIWEN_ADVISOR__<KEY>`` variables and ``.env``.

Example::

    >>> advisor_settings(ctx.settings).vectors        # None: the app's declaration
    >>> AdvisorSettings(vectors=True).vectors          # ZHIWEN_ADVISOR__VECTORS=true
    True
"""

from __future__ import annotations

from pydantic import BaseModel

from zhiwen.config import Settings

SECTION = "advisor"  # ZHIWEN_ADVISOR__*


class AdvisorSettings(BaseModel):
    """What the advisor's setup builds."""

    # vectors of the statute and FAQ KBs at setup: None follows the app's declaration
    # (KBSpec.vectors), true / false overrides it
    vectors: bool | None = None


def advisor_settings(settings: Settings) -> AdvisorSettings:
    """The advisor section of ``settings`` (``ctx.settings`` in a request)."""
    return settings.section(SECTION, AdvisorSettings)


__all__ = ["SECTION", "AdvisorSettings", "advisor_settings"]
