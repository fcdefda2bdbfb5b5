"""A named set of tools: look up, list their OpenAI schemas, call one by name with JSON args.

Example::

    registry = ToolRegistry([LoanTool(), TaxTool()])
    registry.schemas()                       # the ``tools`` list for an OpenAI chat request
    result = registry.call("calc_loan", {"principal": 2_100_000, "years": 30, "rate": 3.1})
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from zhiwen.errors import NotFound
from zhiwen.tools.base import Tool


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool[Any]) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} registered twice")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool[Any]:
        tool = self._tools.get(name)
        if tool is None:
            raise NotFound(
                f"unknown tool {name!r}; known: {', '.join(sorted(self._tools))}",
                message=f"工具不存在：{name}",
                data={"tools": sorted(self._tools)},
            )
        return tool

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        return self.get(name)(arguments)

    def schemas(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        chosen = self._tools.values() if names is None else (self.get(n) for n in names)
        return [t.to_openai_schema() for t in chosen]

    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool[Any]]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)
