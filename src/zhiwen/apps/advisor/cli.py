"""``zhiwen advisor …``: set up the data, chat in the terminal, run the calculators.

Example::

    zhiwen advisor setup ../shared/data
    zhiwen advisor chat                                   # interactive; each role in a panel
    zhiwen advisor chat -m "浦东和闵行哪个房价高"            # one question (scripts, tests)
    zhiwen advisor chat --mode discussion -m "预算200万，首付40万，月收入1万，帮我深度分析"
    zhiwen advisor calc loan --price 3000000 --down-payment-ratio 0.3 --years 30 --rate 3.1
    zhiwen advisor calc tax --price 3000000 --area 89 --first-home --house-age 3
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from zhiwen.answer.events import AppEvent
from zhiwen.appkit.app import AskRequest
from zhiwen.apps.advisor.fmt import pct, yuan
from zhiwen.apps.advisor.tools import build_registry
from zhiwen.clikit.console import console, print_json, run_cli
from zhiwen.clikit.setup_report import WAIT_HELP, print_setup
from zhiwen.clikit.view import fit
from zhiwen.conversation import service as conversation

if TYPE_CHECKING:
    from zhiwen.appkit.app import BaseApp

EXIT_WORDS = {"exit", "quit", "q", "退出", "再见"}
_ROLE_STYLE = {
    "financial_advisor": "green",
    "policy_expert": "blue",
    "market_analyst": "magenta",
    "home_advisor": "yellow",
}


def render_events(events: Iterable[AppEvent], out: Console | None = None) -> dict[str, Any]:
    """Print each event (role panels, discussion lines); returns the ``done`` event's data."""
    out = out or console
    done: dict[str, Any] = {}
    status = None
    for event in events:
        data = event.data
        if event.type == "facts":  # the facts used, so a misreading can be corrected next turn
            out.print(f"[bold]{escape(str(data.get('text') or ''))}[/]", highlight=False)
        elif event.type == "role_start":
            status = out.status(f"{data['icon']} {data['name']}正在分析…")
            status.start()
        elif event.type == "role_result":
            if status is not None:
                status.stop()
            style = _ROLE_STYLE.get(data["role"], "white")
            out.print(
                Panel(Markdown(data["content"]), title=f"{data['icon']} {data['name']}", border_style=style)
            )
        elif event.type == "discussion":
            out.print(
                f"[bold]💬 第{data['round']}轮 {escape(data['from_name'])} → {escape(data['to_name'])}[/]："
                f"{escape(data['content'])}"
            )
        elif event.type == "error":
            out.print(f"[bold red]错误 [{data.get('code')}]：{escape(str(data.get('message')))}[/]")
        elif event.type == "done":
            done = data
    if status is not None:
        status.stop()
    return done


def _context() -> Any:
    from zhiwen.appkit.context import build_context

    return build_context()


def _print_setup(report: Any, data_dir: Path) -> None:
    print_setup(report, command="zhiwen advisor", data_dir=data_dir, ask='chat -m "买二手房的流程是什么？"')


def _request(message: str, session_id: str, mode: str) -> AskRequest:
    return AskRequest(question=message, session_id=session_id, options={"mode": mode})


def _ask_once(app: BaseApp, ctx: Any, message: str, session_id: str, mode: str, json_output: bool) -> None:
    """One question (one turn of the session): the answer as JSON, or the events rendered."""
    if json_output:
        print_json(conversation.ask(app, _request(message, session_id, mode), ctx).model_dump())
        return
    render_events(conversation.stream(app, _request(message, session_id, mode), ctx))


def _read_question() -> str | None:
    """The next question typed, ``""`` for an empty line, ``None`` when the user leaves."""
    try:
        text = console.input("[bold cyan]你：[/]").strip()
    except (EOFError, KeyboardInterrupt):
        return None
    return None if text.lower() in EXIT_WORDS else text


def _chat_loop(app: BaseApp, ctx: Any, session_id: str, mode: str) -> None:
    console.print(
        f"[bold]🏠 购房顾问[/]（{'深度分析' if mode == 'discussion' else '标准模式'}，输入“退出”结束）"
    )
    while (text := _read_question()) is not None:
        if text:
            render_events(conversation.stream(app, _request(text, session_id, mode), ctx))


def _print_loan(result: dict[str, Any], method: str) -> None:
    table = Table(title=f"房贷计算（{result['method_name']}）", show_header=False)
    rows = [
        ("首付", yuan(result["down_payment"])),
        ("贷款金额", yuan(result["loan_amount"])),
        ("月供" if method == "equal_payment" else "首月月供", yuan(result["monthly_payment"])),
        ("末月月供", yuan(result["last_month_payment"])),
        ("还款总额", yuan(result["total_payment"])),
        ("总利息", yuan(result["total_interest"])),
    ]
    for key, value in rows:
        table.add_row(key, value)
    console.print(fit(table, console))
    if result["schedule"]:
        _print_schedule(result["schedule"])


def _print_schedule(schedule: list[dict[str, Any]]) -> None:
    plan = Table(title="还款计划")
    for col in ("期", "还款", "本金", "利息", "剩余本金"):
        plan.add_column(col, justify="right")
    for row in schedule:
        plan.add_row(
            str(row["period"]),
            *(f"{row[k]:,.2f}" for k in ("payment", "principal", "interest", "remaining")),
        )
    console.print(fit(plan, console))


def _print_tax(result: dict[str, Any]) -> None:
    table = Table(title="税费计算", show_header=False)
    table.add_row("契税", f"{yuan(result['deed_tax'])}（{pct(result['deed_tax_rate'])}）")
    for key, label in (
        ("vat", "增值税"),
        ("income_tax", "个人所得税"),
        ("agent_fee", "中介费"),
        ("total", "合计"),
    ):
        table.add_row(label, yuan(result[key]))
    console.print(fit(table, console))
    notes = Table.grid(padding=(0, 1))  # a long note folds under itself, not under its bullet
    notes.add_column(no_wrap=True)
    notes.add_column(overflow="fold")
    for note in result["notes"]:
        notes.add_row("·", escape(note))
    console.print(notes, highlight=False)
    console.print(f"规则：{escape(result['rule']['source'])}；截至{result['checked_on']}", highlight=False)


def build_cli(app: BaseApp) -> typer.Typer:
    cli = typer.Typer(help="购房顾问：多角色购房咨询、贷款与税费计算", no_args_is_help=True)
    calc = typer.Typer(help="房贷与税费计算器", no_args_is_help=True)
    cli.add_typer(calc, name="calc")

    @cli.command()
    @run_cli
    def setup(
        data_dir: Path = typer.Argument(
            ..., metavar="数据目录", help="数据目录（含 cn_law_subset/ 和 lianjia_ershoufang/）"
        ),
        quiet: bool = typer.Option(False, "--quiet", help="不显示进度"),
        wait: bool = typer.Option(False, "--wait", help=WAIT_HELP),
    ) -> None:
        """构建政策法规和常见问题知识库，以及二手房市场数据表：文本索引建好即可提问。"""
        _print_setup(app.setup(data_dir, _context(), progress=not quiet, wait=wait), data_dir)

    @cli.command()
    @run_cli
    def chat(
        message: str | None = typer.Option(None, "--message", "-m", help="只问一个问题（不进入交互）"),
        mode: str = typer.Option("standard", "--mode", help="standard 标准模式；discussion 深度分析"),
        session: str | None = typer.Option(None, "--session", help="会话 ID（默认新建）"),
        json_output: bool = typer.Option(False, "--json", help="以 JSON 输出（仅 -m）"),
    ) -> None:
        """终端对话：每个角色的回答显示在一个面板里。"""
        ctx = _context()
        session_id = session or uuid.uuid4().hex
        if message is not None:
            _ask_once(app, ctx, message, session_id, mode, json_output)
        else:
            _chat_loop(app, ctx, session_id, mode)

    @calc.command("loan")
    @run_cli
    def calc_loan(
        price: float = typer.Option(..., "--price", help="房价（元）"),
        down_payment_ratio: float = typer.Option(..., "--down-payment-ratio", help="首付比例，如 0.3"),
        years: int = typer.Option(..., "--years", help="贷款年限"),
        rate: float = typer.Option(..., "--rate", help="年利率（%），如 3.1"),
        method: str = typer.Option(
            "equal_payment", "--method", help="equal_payment 等额本息 / equal_principal 等额本金"
        ),
        schedule: str = typer.Option("none", "--schedule", help="还款计划：none / yearly / monthly"),
        json_output: bool = typer.Option(False, "--json", help="以 JSON 输出"),
    ) -> None:
        """房贷计算（月供、总利息、还款计划）。"""
        args = {
            "price": price,
            "down_payment_ratio": down_payment_ratio,
            "years": years,
            "rate": rate,
            "method": method,
            "schedule": schedule,
        }
        result = build_registry(None).call("calc_loan", args)
        if json_output:
            print_json(result)
        else:
            _print_loan(result, method)

    @calc.command("tax")
    @run_cli
    def calc_tax(
        price: float = typer.Option(..., "--price", help="成交价（元）"),
        area: float = typer.Option(..., "--area", help="面积（㎡）"),
        first_home: bool = typer.Option(True, "--first-home/--second-home", help="买方首套 / 二套"),
        house_age: int = typer.Option(..., "--house-age", help="卖方持有年限（年）"),
        only_home: bool = typer.Option(False, "--only-home", help="卖方家庭唯一住房（满五唯一免个税）"),
        city: str | None = typer.Option(None, "--city", help="城市"),
        rule: str | None = typer.Option(None, "--rule", help="契税规则 ID（如 2024-16、2016-23）"),
        json_output: bool = typer.Option(False, "--json", help="以 JSON 输出"),
    ) -> None:
        """二手房交易税费（契税、增值税、个税、中介费）。"""
        args: dict[str, Any] = {
            "price": price,
            "area": area,
            "is_first_home": first_home,
            "house_age_years": house_age,
            "is_only_home": only_home,
            "city": city,
            "rule": rule,
        }
        result = build_registry(None).call("calc_tax", args)
        if json_output:
            print_json(result)
        else:
            _print_tax(result)

    @cli.command("tools")
    @run_cli
    def tools() -> None:
        """列出购房顾问的工具。"""
        for tool in build_registry(None):
            console.print(f"[bold]{tool.name}[/]：{tool.description}")

    return cli
