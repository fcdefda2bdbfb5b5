"""The advisor's roles (财务顾问, 政策专家, 市场分析师, 购房顾问), loaded from ``data/roles.toml``.

A role is data: key, display name, icon, system prompt, the tools it may call and the keywords
that select it. :func:`match_keywords` is the first stage of intent recognition (then the plan, :mod:`.plan`).

Example::

    >>> roles = load_roles()
    >>> [r.name for r in roles]
    ['政策专家', '市场分析师', '财务顾问', '购房顾问']
    >>> [r.key for r, _ in match_keywords("月供多少？契税多少？", roles)]
    ['policy_expert', 'financial_advisor']
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

ROLES_RESOURCE = "roles.toml"


@dataclass(frozen=True, slots=True)
class Role:
    key: str
    name: str
    icon: str
    prompt: str
    tools: tuple[str, ...]
    keywords: tuple[str, ...]
    order: int = 5
    synthesis: bool = False  # the role that writes the final synthesis (购房顾问)

    @property
    def label(self) -> str:
        return f"{self.icon} {self.name}"


def parse_roles(text: str) -> list[Role]:
    data = tomllib.loads(text)
    roles = [
        Role(
            key=str(r["key"]),
            name=str(r["name"]),
            icon=str(r.get("icon", "")),
            prompt=str(r.get("prompt", "")).strip(),
            tools=tuple(r.get("tools", ())),
            keywords=tuple(r.get("keywords", ())),
            order=int(r.get("order", 5)),
            synthesis=bool(r.get("synthesis", False)),
        )
        for r in data.get("roles", ())
    ]
    keys = [r.key for r in roles]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate role keys in roles data: {keys}")
    if sum(r.synthesis for r in roles) != 1:
        raise ValueError("roles data must mark exactly one role with synthesis = true")
    return sorted(roles, key=lambda r: r.order)


@lru_cache(maxsize=1)
def _shipped_roles() -> tuple[Role, ...]:
    text = resources.files("zhiwen.apps.advisor").joinpath(f"data/{ROLES_RESOURCE}").read_text("utf-8")
    return tuple(parse_roles(text))


def load_roles() -> list[Role]:
    """The roles shipped with the app, in execution order."""
    return list(_shipped_roles())


def role_by_key(key: str, roles: Sequence[Role] | None = None) -> Role:
    for role in roles if roles is not None else _shipped_roles():
        if role.key == key:
            return role
    raise KeyError(key)


def synthesis_role(roles: Sequence[Role] | None = None) -> Role:
    return next(r for r in (roles if roles is not None else _shipped_roles()) if r.synthesis)


def match_keywords(text: str, roles: Sequence[Role] | None = None) -> list[tuple[Role, list[str]]]:
    """Every role with a trigger keyword in ``text`` (case-insensitive), with the keywords found."""
    lowered = text.lower()
    out = []
    for role in roles if roles is not None else _shipped_roles():
        hits = [k for k in role.keywords if k.lower() in lowered]
        if hits:
            out.append((role, hits))
    return out
