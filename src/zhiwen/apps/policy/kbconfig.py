"""The app's KB mapping (``data/kbs.toml``): which KBs exist, how setup builds them, who searches them.

The shipped file maps three roles — ``visa``, ``airline``, ``general`` — to KB names and data
sources, and each intent to the specialist KBs it searches with the rewritten question
(``[routing]``). A user points the app at their own file with ``ZHIWEN_POLICY__KB_CONFIG``.

Example::

    >>> cfg = load_kb_config()
    >>> cfg.kb_names("airline_visa_free")
    ['policy_airline', 'policy_visa']
    >>> cfg.general_kb().name
    'policy_general'
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from zhiwen.errors import InvalidParameter

SPECIALIST_INTENTS = ("visa_free", "airline_visa_free", "both")


class SourceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kind: Literal["visa_table", "statutes", "markdown"]
    path: str = Field(min_length=1)  # relative to DATA_DIR, glob allowed
    policies: str | None = None  # visa_table: the folder of policy pages
    all_articles: bool = Field(False, alias="all")
    articles: list[str] = Field(default_factory=list)
    chapters: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)


class KBEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_\-\u4e00-\u9fff]{1,64}$")
    description: str = ""
    sources: list[SourceConfig] = Field(default_factory=list)


class RoutingConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    visa_free: list[str] = Field(default_factory=lambda: ["visa"])
    airline_visa_free: list[str] = Field(default_factory=lambda: ["airline", "visa"])
    both: list[str] = Field(default_factory=lambda: ["visa", "airline"])
    general: str = "general"


class PolicyKBConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    routing: RoutingConfig = Field(default_factory=RoutingConfig)
    kbs: dict[str, KBEntry]

    @model_validator(mode="after")
    def _roles_exist(self) -> PolicyKBConfig:
        wanted = {self.routing.general, *self.routing.visa_free, *self.routing.airline_visa_free}
        wanted |= set(self.routing.both)
        missing = sorted(wanted - set(self.kbs))
        if missing:
            raise ValueError(f"[routing] names KB roles not defined under [kbs]: {', '.join(missing)}")
        return self

    def roles(self, intent: str) -> list[str]:
        """The specialist roles an intent searches (none for ``other``)."""
        if intent not in SPECIALIST_INTENTS:
            return []
        return list(getattr(self.routing, intent))

    def kb_names(self, intent: str) -> list[str]:
        return [self.kbs[role].name for role in self.roles(intent)]

    def general_kb(self) -> KBEntry:
        return self.kbs[self.routing.general]

    def with_names(self, overrides: dict[str, str | None]) -> PolicyKBConfig:
        """A copy with some roles' KB names replaced (settings ``visa_kb`` …); None keeps the name."""
        kbs = {
            role: kb.model_copy(update={"name": overrides[role]}) if overrides.get(role) else kb
            for role, kb in self.kbs.items()
        }
        return self.model_copy(update={"kbs": kbs})


def parse_kb_config(text: str, *, origin: str = "kbs.toml") -> PolicyKBConfig:
    try:
        return PolicyKBConfig.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        detail = " ".join(str(exc).split())
        raise InvalidParameter(f"{origin}: {detail}", message=f"政策问答知识库配置有误：{origin}") from exc


@lru_cache(maxsize=8)
def _load(path: str | None) -> PolicyKBConfig:
    if path is None:
        text = resources.files("zhiwen.apps.policy").joinpath("data/kbs.toml").read_text(encoding="utf-8")
        return parse_kb_config(text)
    file = Path(path).expanduser()
    if not file.is_file():
        raise InvalidParameter(f"KB config not found: {file}", message=f"找不到政策问答知识库配置：{file}")
    return parse_kb_config(file.read_text(encoding="utf-8"), origin=str(file))


def load_kb_config(path: str | Path | None = None) -> PolicyKBConfig:
    """The mapping at ``path``, or the one shipped with the app (cached per path)."""
    return _load(None if path is None else str(path))
