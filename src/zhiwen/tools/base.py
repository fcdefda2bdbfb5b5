"""A tool: a named function with pydantic-validated arguments and an OpenAI function schema.

Tools are what an agent (the LLM, or a rule-based planner when there is no LLM) may call. The
arguments are a pydantic model, so the schema the model sees and the validation the call gets
come from one definition (schema, validation and errors agree by construction). Invalid arguments raise
:class:`~zhiwen.errors.ToolValidationError` (2001) with a Chinese message naming the field,
or :class:`~zhiwen.errors.MissingParameter` (3001) / :class:`~zhiwen.errors.WrongParameterType`
(3002) for a missing field or a wrong type.

Example::

    class LoanArgs(BaseModel):
        principal: float = Field(gt=0, description="贷款本金（元）")
        years: int = Field(ge=1, le=30, description="贷款年限")

    class LoanTool(Tool[LoanArgs]):
        name = "calc_loan"
        description = "计算房贷月供"
        args_model = LoanArgs

        def run(self, args: LoanArgs) -> dict[str, Any]:
            return {"monthly": args.principal / args.years / 12}

    tool = LoanTool()
    tool.to_openai_schema()["function"]["parameters"]["required"]   # ['principal', 'years']
    tool({"principal": 1e6, "years": 30})                          # validated, then run
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from zhiwen.errors import MissingParameter, ToolValidationError, WrongParameterType
from zhiwen.validation import kind_of, predicate, raw_errors

A = TypeVar("A", bound=BaseModel)

log = logging.getLogger(__name__)


def _field_name(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "参数"


def _label(model: type[BaseModel] | None, name: str) -> str:
    """The field's Chinese name: its description up to the first comma (``首付比例，如 0.3`` → 首付比例)."""
    field = model.model_fields.get(name) if model is not None else None
    text = (field.description or "") if field is not None else ""
    return re.split(r"[，,（(；;：:]", text, maxsplit=1)[0].strip()


def validation_error(
    exc: ValidationError, model: type[BaseModel] | None = None
) -> ToolValidationError | MissingParameter | WrongParameterType:
    """The first pydantic error as a coded error whose Chinese message names the field.

    The message is Chinese only, worded by :mod:`zhiwen.validation`; with the arguments'
    ``model`` it also gives the field's Chinese name: ``输入参数有误：method（还款方式，取值无效，
    可选：'equal_payment'、'equal_principal'）``; a unit guard gives its hint instead
    (``输入参数有误：rate（利率请按百分数填写，如 3.1 表示 3.1%）``).
    pydantic's English goes to ``data["errors"]`` and the log, never into the message or detail
    (the CLI prints both).
    """
    errors = exc.errors(include_url=False)
    first = errors[0]
    name = _field_name(tuple(first.get("loc", ())))
    label = _label(model, name)
    data: dict[str, Any] = {"field": name, "label": label} if label else {"field": name}
    data["errors"] = raw_errors(errors)
    log.info("invalid tool arguments: %s", data["errors"])
    kind = kind_of(first)
    text = predicate(first)
    if kind == "value" and str(first.get("type", "")).startswith("zhiwen_") and text:
        return ToolValidationError(message=f"输入参数有误：{name}（{text}）", data=data)  # names its quantity
    explained = f"（{'，'.join(p for p in (label, text) if p)}）" if (label or text) else ""
    if kind == "missing":
        label_only = f"（{label}）" if label else ""
        return MissingParameter(message=f"缺少必需参数：{name}{label_only}", data=data)
    if kind == "type":
        return WrongParameterType(message=f"参数类型错误：{name}{explained}", data=data)
    return ToolValidationError(message=f"输入参数有误：{name}{explained}", data=data)


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),  # before int: a bool is an int in Python, never in JSON Schema
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
    (type(None), "null"),
)


def _schema_types(prop: Mapping[str, Any]) -> set[str]:
    types = prop.get("type")
    found = set(types) if isinstance(types, list) else {types} if isinstance(types, str) else set()
    for key in ("anyOf", "oneOf"):
        for option in prop.get(key, ()):
            found |= _schema_types(option)
    return found


def _first_json_type_mismatch(properties: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """The first top-level argument whose JSON type the schema does not allow (true for a number,
    "3" for an integer): pydantic's lax mode would coerce those, a tool must not."""
    for name, value in arguments.items():
        allowed = _schema_types(properties.get(name, {}))
        if not allowed:
            continue
        kind = next(t for cls, t in _JSON_TYPES if isinstance(value, cls)) if value is not None else "null"
        if kind in allowed or (kind == "integer" and "number" in allowed):
            continue
        if kind == "number" and "integer" in allowed and float(value).is_integer():
            continue  # 30.0 for an integer: a JSON number all the same
        return name
    return None


_JSON_TYPE_NAMES = {
    "integer": "整数",
    "number": "数字",
    "boolean": "true 或 false",
    "string": "字符串",
    "array": "列表",
    "object": "JSON 对象",
}


def _json_type_error(name: str, prop: Mapping[str, Any], model: type[BaseModel]) -> WrongParameterType:
    """``参数类型错误：years（贷款年限，应为整数）`` for an argument of the wrong JSON type."""
    wanted = [_JSON_TYPE_NAMES[t] for t in sorted(_schema_types(prop)) if t in _JSON_TYPE_NAMES]
    parts = [p for p in (_label(model, name), f"应为{'或'.join(wanted)}" if wanted else "") if p]
    explained = f"（{'，'.join(parts)}）" if parts else ""
    return WrongParameterType(message=f"参数类型错误：{name}{explained}", data={"field": name})


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI function schemas are friendlier without ``$defs``: inline every local ``$ref``."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                # pydantic puts the field's description/default beside the $ref: keep them
                siblings = {k: v for k, v in node.items() if k != "$ref"}
                return walk({**defs[ref.split("/")[-1]], **siblings})
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return dict(walk(schema))


class Tool(Generic[A]):
    """Subclass with ``name``, ``description``, ``args_model`` and :meth:`run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[BaseModel]]

    def validate(self, arguments: Mapping[str, Any] | BaseModel | None) -> A:
        if isinstance(arguments, self.args_model):
            return arguments  # type: ignore[return-value]
        try:
            data = dict(arguments or {})
        except (TypeError, ValueError) as exc:  # arguments that are not a mapping at all
            raise WrongParameterType(str(exc), message="参数类型错误：arguments") from None
        wrong = _first_json_type_mismatch(self._properties(), data)
        if wrong is not None:
            raise _json_type_error(wrong, self._properties().get(wrong, {}), self.args_model)
        try:
            return self.args_model.model_validate(data)  # type: ignore[return-value]
        except ValidationError as exc:
            raise validation_error(exc, self.args_model) from None

    def run(self, args: A) -> Any:
        raise NotImplementedError

    def __call__(self, arguments: Mapping[str, Any] | BaseModel | None = None) -> Any:
        return self.run(self.validate(arguments))

    def _properties(self) -> dict[str, Any]:
        cached: dict[str, Any] | None = self.__dict__.get("_schema_properties")
        if cached is None:
            cached = self.__dict__["_schema_properties"] = self.parameters_schema()["properties"]
        return cached

    def parameters_schema(self) -> dict[str, Any]:
        schema = _inline_refs(self.args_model.model_json_schema())
        schema.pop("title", None)
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        schema.setdefault("required", [])
        return schema

    def to_openai_schema(self) -> dict[str, Any]:
        """``{"type": "function", "function": {"name", "description", "parameters"}}``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters_schema(),
            },
        }

    def __repr__(self) -> str:
        return f"<tool {self.name}>"
