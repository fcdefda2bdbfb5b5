"""A tool: a named function with pydantic-validated arguments and an OpenAI function schema.

Tools are what an agent (the LLM, or a rule-based planner when there is no LLM) may call. The
arguments are a pydantic model, so the schema the model sees and the validation the call gets
come from one definition (seed 003, Properties 1–3). Invalid arguments raise
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

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from zhiwen.errors import MissingParameter, ToolValidationError, WrongParameterType

A = TypeVar("A", bound=BaseModel)

_TYPE_ERRORS = ("_type", "_parsing", "type_error", "is_instance_of")


def _field_name(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "参数"


_BOUNDS = {
    "greater_than": ("gt", "须大于"),
    "greater_than_equal": ("ge", "须不小于"),
    "less_than": ("lt", "须小于"),
    "less_than_equal": ("le", "须不大于"),
}


def _label(model: type[BaseModel] | None, name: str) -> str:
    """The field's Chinese name: its description up to the first comma (``首付比例，如 0.3`` → 首付比例)."""
    field = model.model_fields.get(name) if model is not None else None
    text = (field.description or "") if field is not None else ""
    return re.split(r"[，,（(；;：:]", text, maxsplit=1)[0].strip()


def _explain(first: Mapping[str, Any], label: str) -> str:
    """``（首付比例，须小于 1）`` — what a person needs to fix the value; empty when nothing is known."""
    parts = [label] if label else []
    bound = _BOUNDS.get(str(first.get("type", "")))
    ctx = first.get("ctx") or {}
    if bound is not None and bound[0] in ctx:
        value = ctx[bound[0]]
        parts.append(f"{bound[1]} {value:g}" if isinstance(value, float) else f"{bound[1]} {value}")
    return f"（{'，'.join(parts)}）" if parts else ""


def validation_error(
    exc: ValidationError, model: type[BaseModel] | None = None
) -> ToolValidationError | MissingParameter | WrongParameterType:
    """The first pydantic error as a coded error with seed 003's message naming the field.

    With the arguments' ``model`` the message also gives the field's Chinese name and, for a
    value out of range, the bound: ``输入参数有误：down_payment_ratio（首付比例，须小于 1）``.
    """
    first = exc.errors()[0]
    name = _field_name(tuple(first.get("loc", ())))
    kind = str(first.get("type", ""))
    detail = f"{name}: {first.get('msg', '')}"
    label = _label(model, name)
    data = {"field": name, "label": label} if label else {"field": name}
    if kind == "missing":
        return MissingParameter(detail, message=f"缺少必需参数：{name}{_explain({}, label)}", data=data)
    # int_from_float: 2.5 for an integer field is the wrong type, not a wrong value
    if any(kind.endswith(t) for t in _TYPE_ERRORS) or kind in ("model_type", "int_from_float"):
        return WrongParameterType(detail, message=f"参数类型错误：{name}{_explain({}, label)}", data=data)
    return ToolValidationError(detail, message=f"输入参数有误：{name}{_explain(first, label)}", data=data)


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
            raise WrongParameterType(
                f"{wrong}: JSON type does not match the schema",
                message=f"参数类型错误：{wrong}",
                data={"field": wrong},
            )
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
