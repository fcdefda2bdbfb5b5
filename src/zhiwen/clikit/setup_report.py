"""What an app's setup says on the terminal: the ``--wait`` option, and the closing lines.

Every app's ``setup`` command takes ``--wait`` (:data:`WAIT_HELP`) and ends with
:func:`print_setup`: each KB built, its notes, how to ask now, and how the missing vectors fill
in (``zhiwen serve`` in the background, or ``--wait``). The setup itself is the app contract's
(:func:`zhiwen.appkit.setup.run_setup`).

Example::

    report = app.setup(data_dir, build_context(), progress=True, wait=wait)
    print_setup(report, command="zhiwen recipes", data_dir=data_dir, ask='ask "番茄炒蛋怎么做"')
"""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape

from zhiwen.appkit.app import SetupReport
from zhiwen.appkit.setup import duration_zh
from zhiwen.clikit.console import console

#: the ``--wait`` option of every app's ``setup`` command
WAIT_HELP = "在这里等向量补全（显示进度）；默认建好文本索引即返回，向量由 zhiwen serve 在后台补全"


def setup_lines(report: SetupReport, *, command: str, data_dir: Path | str, ask: str) -> list[str]:
    """What a setup says when it returns (rich markup): each KB, then how the vectors fill in.

    ``command``: the app's command group (``zhiwen recipes``); ``ask``: a first question to try
    (``ask "番茄炒蛋怎么做"``)."""
    lines = [f"知识库 {escape(kb)}：{chunks:,} 个片段" for kb, chunks in report.kbs.items()]
    lines += [f"[dim]{escape(note)}[/]" for note in report.notes]
    lines.append(
        f"[green]文本索引已就绪[/]（{report.text_ready_seconds:.1f} 秒），现在就可以提问："
        f"{escape(command)} {escape(ask)}"
    )
    if report.text_only:
        again = f"ZHIWEN_{report.app.upper()}__VECTORS=true {command} setup {data_dir} --wait"
        lines.append(
            f"{escape('、'.join(report.text_only))}：只用文本索引（关键词检索），不计算向量——"
            "在本应用自带的问题集上，加上向量并不提高质量。"
        )
        lines.append(f"  如需向量：[bold]{escape(again)}[/]")
    if report.vectors_missing:
        lines += _pending_lines(report, command, data_dir)
    elif report.waited and len(report.text_only) < len(report.kbs):
        lines.append("向量已全部补全：检索为关键词 + 语义混合检索。")
    lines.append(f"完成，用时 {report.seconds:.1f} 秒")
    return lines


def _pending_lines(report: SetupReport, command: str, data_dir: Path | str) -> list[str]:
    eta = duration_zh(report.vectors_eta_seconds)
    return [
        f"向量还差 {report.vectors_missing:,} 个段落（预计约 {eta}）。补全之前按关键词检索，"
        "已补全的向量随时加入语义检索，无需重新 setup：",
        "  · 运行 [bold]zhiwen serve[/] 时在后台自动补全（可随时停止，下次启动接着补）；",
        f"  · 或运行 [bold]{escape(f'{command} setup {data_dir} --wait')}[/] 在这里等它补全（显示进度）。",
    ]


def print_setup(report: SetupReport, *, command: str, data_dir: Path | str, ask: str) -> None:
    """Print :func:`setup_lines` on the console (every app's ``setup`` command ends with it)."""
    for line in setup_lines(report, command=command, data_dir=data_dir, ask=ask):
        console.print(line, highlight=False)


__all__ = ["WAIT_HELP", "print_setup", "setup_lines"]
