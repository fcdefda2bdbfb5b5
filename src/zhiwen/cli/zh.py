"""typer's and click's own words in Chinese: help screens, usage lines, usage errors, defaults.

``zhiwen --help`` said 「Show this message and exit.」, 「Usage:」, 「Options」; a forgotten argument
said 「Missing argument 'question'.」. :func:`install` (called once by :mod:`zhiwen.cli.main`)
puts every such string into Chinese, through the hooks each layer has:

* typer's panel titles and markers are module constants of ``typer.rich_utils`` (its documented
  way to restyle help), replaced here;
* the strings that go through gettext (``typer.core``; click's modules when an older typer runs
  on click itself) are answered from :data:`CATALOGUE`. gettext's own domain would need compiled
  catalogues and the user's locale to pick Chinese, so the module-level ``_`` is swapped instead;
* the usage line comes from the context's ``formatter_class`` (click's extension point);
* typer ≥ 0.2x carries its own copy of click whose messages are plain f-strings: an error's
  message is translated where typer prints it (``rich_format_error``) by :data:`ERROR_RULES`,
  the help option's text where the option is made, and a parameter's type (``<int>``) where it
  is displayed.

Long Chinese help text folds instead of being cut with "…" in an 80-column terminal.
:func:`setting` reads a setting's value in force, so help can say 「默认 127.0.0.1」 rather than
a setting's path.

Example::

    from zhiwen.cli import zh

    zh.install()                      # before the typer app runs
    zh.translate_error("Missing argument 'question'.")   # '缺少参数「question」。'
    f"端口（默认 {zh.setting('api.port')}）"                # '端口（默认 8000）'
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from typing import Any

import typer
from rich.text import Text

#: gettext message ids of typer and click, in Chinese (placeholders kept by name)
CATALOGUE = {
    "Usage:": "用法：",
    "Options": "选项",
    "Arguments": "参数",
    "Positional arguments": "参数",
    "Commands": "命令",
    "Show this message and exit.": "显示帮助并退出。",
    "Show the version and exit.": "显示版本并退出。",
    "Do you want to continue?": "是否继续？",
    "Confirm the action without prompting.": "不再确认，直接执行。",
    "Aborted!": "已取消。",
    "required": "必填",
    "default: {default}": "默认：{default}",
    "env var: {var}": "环境变量：{var}",
    "(dynamic)": "（运行时确定）",
    "deprecated": "已弃用",
    "Error: {message}": "错误：{message}",
    "Try '{command} {option}' for help.": "运行 {command} {option} 查看帮助。",
    "Missing command.": "缺少子命令。",
    "No such command {name!r}.": "没有这个命令：{name}。",
    "No such option {name!r}.": "没有这个选项：{name}。",
    "Missing argument": "缺少参数",
    "Missing option": "缺少选项",
    "Missing parameter": "缺少参数",
    "Missing parameter: {param_name}": "缺少参数：{param_name}",
    "Invalid value for {param_hint}: {message}": "{param_hint} 的取值无效：{message}",
    "Invalid value: {message}": "取值无效：{message}",
    "Got unexpected extra argument ({args})": "多余的参数：{args}",
    "Got unexpected extra arguments ({args})": "多余的参数：{args}",
    "Option {name!r} requires an argument.": "选项 {name} 需要一个值。",
    "Option {name!r} requires {nargs} arguments.": "选项 {name} 需要 {nargs} 个值。",
    "Option {name!r} does not take a value.": "选项 {name} 不接受取值。",
    "{value!r} is not a valid {number_type}.": "{value} 不是有效的数字。",
    "{value} is not in the range {range}.": "{value} 不在范围 {range} 内。",
    "{value!r} is not one of {choices}.": "{value} 不是可选值之一：{choices}。",
    "{value!r} is not {choice}.": "{value} 不是 {choice}。",
    "{name} {filename!r} does not exist.": "{filename} 不存在。",
    "Repeat for confirmation": "再输入一次以确认",
    "Error: The two entered values do not match.": "错误：两次输入不一致。",
    "Error: invalid input": "错误：输入无效",
}

#: typer.rich_utils constants (help panels, markers, the error hint)
RICH_CONSTANTS = {
    "DEPRECATED_STRING": "（已弃用）",
    "DEFAULT_STRING": "[默认：{}]",
    "ENVVAR_STRING": "[环境变量：{}]",
    "REQUIRED_LONG_STRING": "[必填]",
    "ARGUMENTS_PANEL_TITLE": "参数",
    "OPTIONS_PANEL_TITLE": "选项",
    "COMMANDS_PANEL_TITLE": "命令",
    "ERRORS_PANEL_TITLE": "错误",
    "ABORTED_TEXT": "已取消。",
    "RICH_HELP": "运行 [blue]{command_path} {help_option}[/] 查看帮助。",
}

HELP_OPTION_TEXT = "显示帮助并退出。"

#: a parameter's type as help shows it (``<int>``), in words
TYPE_NAMES = {
    "str": "文本",
    "int": "整数",
    "float": "数值",
    "bool": "是/否",
    "int range": "整数",
    "float range": "数值",
    "path": "路径",
    "file": "文件",
    "directory": "目录",
    "datetime": "日期时间",
    "integer": "整数",
    "text": "文本",
}


def _hint(text: str) -> str:
    """``'--kb' / '-k'`` → ``--kb / -k`` (click quotes parameter names)."""
    return text.replace("'", "")


def _type(name: str) -> str:
    return TYPE_NAMES.get(name.lower(), name)


def _or_list(text: str) -> str:
    return re.sub(r",? or ", "、", text).replace(", ", "、")


# (pattern matched against the whole message, its Chinese); ``{inner}`` is translated again
ERROR_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile(r"Missing argument (?P<x>.+)\."), lambda m: f"缺少参数「{_hint(m['x'])}」。"),
    (re.compile(r"Missing option (?P<x>.+)\."), lambda m: f"缺少选项「{_hint(m['x'])}」。"),
    (re.compile(r"Missing parameter:? (?P<x>.+?)\.?"), lambda m: f"缺少参数「{_hint(m['x'])}」。"),
    (re.compile(r"Missing command\."), lambda m: "缺少子命令。"),
    (re.compile(r"No such command (?P<x>.+)\."), lambda m: f"没有这个命令：{_hint(m['x'])}。"),
    (
        re.compile(r"No such option:? (?P<x>\S+?)\.?(?: \(Possible options: (?P<y>.+)\))?"),
        lambda m: f"没有这个选项：{_hint(m['x'])}" + (f"（您是不是想用：{m['y']}）" if m["y"] else "。"),
    ),
    (re.compile(r"Option (?P<x>.+) requires an argument\."), lambda m: f"选项 {_hint(m['x'])} 需要一个值。"),
    (
        re.compile(r"Option (?P<x>.+) requires (?P<n>\d+) arguments\."),
        lambda m: f"选项 {_hint(m['x'])} 需要 {m['n']} 个值。",
    ),
    (re.compile(r"Option (?P<x>.+) does not take a value\."), lambda m: f"选项 {_hint(m['x'])} 不接受取值。"),
    (
        re.compile(r"Got unexpected extra arguments? ?(?:\(s\))? \((?P<x>.*)\)"),
        lambda m: f"多余的参数：{m['x']}",
    ),
    (
        re.compile(r"Invalid value for (?P<x>.+?): (?P<inner>.*)"),
        lambda m: f"{_hint(m['x'])} 的取值无效：{translate_error(m['inner'])}",
    ),
    (re.compile(r"Invalid value: (?P<inner>.*)"), lambda m: f"取值无效：{translate_error(m['inner'])}"),
    (re.compile(r"Input should be greater than or equal to (?P<n>.+)"), lambda m: f"应大于或等于 {m['n']}"),
    (re.compile(r"Input should be greater than (?P<n>.+)"), lambda m: f"应大于 {m['n']}"),
    (re.compile(r"Input should be less than or equal to (?P<n>.+)"), lambda m: f"应小于或等于 {m['n']}"),
    (re.compile(r"Input should be less than (?P<n>.+)"), lambda m: f"应小于 {m['n']}"),
    (re.compile(r"Input should be a valid integer.*"), lambda m: "应为整数"),
    (re.compile(r"Input should be a valid number.*"), lambda m: "应为数字"),
    (re.compile(r"Input should be a valid boolean.*"), lambda m: "应为 true 或 false"),
    (re.compile(r"Input should be (?P<x>'.*')"), lambda m: f"应为以下之一：{_or_list(m['x'])}"),
    (
        re.compile(r"(?:Value )?(?P<v>.+) is not a valid (?P<t>[\w ]+)\."),
        lambda m: f"{m['v']} 不是有效的{_type(m['t'])}",
    ),
    (re.compile(r"(?P<v>.+) is not in the range (?P<r>.+)\."), lambda m: f"{m['v']} 不在范围 {m['r']} 内"),
    (re.compile(r"(?:\w+ )?(?P<x>'.+') does not exist\."), lambda m: f"{_hint(m['x'])} 不存在"),
    (
        re.compile(r"Could not open file (?P<x>.+?): (?P<y>.*)"),
        lambda m: f"无法打开文件 {_hint(m['x'])}：{m['y']}",
    ),
]


def translate_error(message: str) -> str:
    """A usage error of typer/click (or the pydantic check typer runs) in Chinese; a message no
    rule knows (e.g. already Chinese, from our own checks) comes back as it was."""
    text = message.strip()
    for pattern, chinese in ERROR_RULES:
        match = pattern.fullmatch(text)
        if match:
            return chinese(match)
    return message


def gettext(message: str) -> str:
    return CATALOGUE.get(message, message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return gettext(singular if n == 1 else plural)


def type_label(label: str | None) -> str | None:
    """``<int range>`` → ``<整数>``, ``<list[str]>`` → ``<文本>`` (help says when to repeat)."""
    match = re.fullmatch(r"<(.*)>", label or "")
    if not match:
        return label
    inner = match.group(1)
    if inner.startswith("list[") and inner.endswith("]"):
        inner = inner[5:-1]
    return f"<{_type(inner)}>"


def usage_args(args: str) -> str:
    """The usage line's placeholders in Chinese: ``[OPTIONS] COMMAND [ARGS]...``."""
    return args.replace("[OPTIONS]", "[选项]").replace("COMMAND [ARGS]...", "命令 [参数]...")


# -- the hooks ---------------------------------------------------------------------------------
_GETTEXT_MODULES = (
    "typer.core",
    "click.core",
    "click.exceptions",
    "click.decorators",
    "click.formatting",
    "click.parser",
    "click.types",
    "click.termui",
)


def _install_gettext() -> None:
    for name in _GETTEXT_MODULES:
        module = sys.modules.get(name)
        if module is None:
            continue
        if callable(getattr(module, "_", None)):
            module._ = gettext  # type: ignore[attr-defined]
        if callable(getattr(module, "ngettext", None)):
            module.ngettext = ngettext  # type: ignore[attr-defined]


def _install_rich_utils() -> None:
    from typer import rich_utils

    for name, value in RICH_CONSTANTS.items():
        if hasattr(rich_utils, name):
            setattr(rich_utils, name, value)
    show_error = rich_utils.rich_format_error

    @functools.wraps(show_error)
    def rich_format_error(self: Any) -> None:
        message = translate_error(self.format_message())
        self.format_message = lambda: message  # this one exception, as it is shown
        show_error(self)

    rich_utils.rich_format_error = rich_format_error
    make_text = getattr(rich_utils, "_make_rich_text", None)
    if make_text is not None:

        @functools.wraps(make_text)
        def folding_text(*args: Any, **kwargs: Any) -> Any:
            text = make_text(*args, **kwargs)
            if isinstance(text, Text):
                text.overflow = "fold"  # Chinese help has no spaces to wrap at: fold, never cut
            return text

        rich_utils._make_rich_text = folding_text


def _click_classes() -> tuple[Any, Any]:
    """click's Context (the class declaring ``formatter_class``) and Command, as typer uses them."""
    owner = next(k for k in typer.Context.__mro__ if "formatter_class" in vars(k))
    return owner, sys.modules[owner.__module__].Command


def _install_usage_and_help_option() -> None:
    context, command = _click_classes()
    base = context.formatter_class

    class ChineseHelpFormatter(base):  # type: ignore[misc, valid-type]
        def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
            super().write_usage(prog, usage_args(args), prefix or "用法：")

    context.formatter_class = ChineseHelpFormatter
    get_help_option = command.get_help_option

    @functools.wraps(get_help_option)
    def chinese_help_option(self: Any, ctx: Any) -> Any:
        option = get_help_option(self, ctx)
        if option is not None:
            option.help = HELP_OPTION_TEXT
        return option

    command.get_help_option = chinese_help_option


def _install_type_names() -> None:
    from typer import core

    parameter = getattr(core, "_TyperParameter", None)
    if parameter is not None and hasattr(parameter, "display_type"):
        display_type = parameter.display_type

        @functools.wraps(display_type)
        def chinese_type(self: Any, ctx: Any) -> Any:
            return type_label(display_type(self, ctx))

        parameter.display_type = chinese_type
    option = getattr(core, "TyperOption", None)
    if option is not None and hasattr(option, "display_type_rich"):
        display_rich = option.display_type_rich

        @functools.wraps(display_rich)
        def without_flag_type(self: Any, ctx: Any) -> Any:
            if getattr(self, "is_flag", False) and self.metavar is None:
                return None  # a switch takes no value: no「<是/否>」beside it
            return display_rich(self, ctx)

        option.display_type_rich = without_flag_type


_installed = False


def install() -> None:
    """Put typer's and click's strings into Chinese for this process (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    _install_gettext()
    _install_rich_utils()
    _install_usage_and_help_option()
    _install_type_names()


# -- real default values in help ---------------------------------------------------------------
def setting(path: str) -> Any:
    """The value of setting ``path`` (``"api.port"``) in force now (environment, ``.env``,
    defaults); the declared default when the settings do not validate, so help always shows."""
    from zhiwen.config import Settings, get_settings

    try:
        node: Any = get_settings()
    except Exception:  # a bad value elsewhere must not stop --help
        node = Settings.model_construct()
    for part in path.split("."):
        node = getattr(node, part)
    return node
