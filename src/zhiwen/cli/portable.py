"""``zhiwen kb export|import`` and ``zhiwen backup|restore``: a KB as one file, a home as a folder.

Example::

    zhiwen kb export manual manual.zwkb
    zhiwen kb import manual.zwkb --as manual_pg --backend postgresql://postgres@127.0.0.1/zhiwen
    zhiwen kb import manual.zwkb --replace                       # over the existing KB, all or nothing
    zhiwen backup /backups/2026-11-28                             # while the server answers
    zhiwen restore /backups/2026-11-28 --home /srv/zhiwen
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.filesize import decimal

from zhiwen.cli.kb_group import kb_app
from zhiwen.clikit.console import console, print_json, run_cli
from zhiwen.clikit.view import kv_table

_JSON = typer.Option(False, "--json", help="输出 JSON")


@run_cli
def kb_export(
    name: str = typer.Argument(..., metavar="知识库", help="知识库名称"),
    file: Path = typer.Argument(..., metavar="文件", help="导出文件路径（如 manual.zwkb）"),
    as_json: bool = _JSON,
) -> None:
    """把知识库导出为一个文件：文档、段落、向量、人工整理（修改、停用、问题、关键词、FAQ、词典、同义词）、设置与调参。

    导出期间检索照常；导入、整理会稍候。文件可导入任何存储后端（内置、PostgreSQL、Qdrant）。
    """
    from zhiwen.kb import open_kb
    from zhiwen.portable import export_kb
    from zhiwen.portable.progress import RichSteps

    kb = open_kb(name)
    with RichSteps() as steps:
        report = export_kb(kb, file, steps=steps)
    if as_json:
        print_json(report.as_dict())
        return
    rows = [
        ("文件", report.path),
        ("文档", f"{report.documents:,}"),
        ("段落", f"{report.chunks:,}"),
        ("向量", f"{report.vectors:,}"),
        ("大小", decimal(report.bytes)),
        ("用时", f"{report.seconds:.1f} 秒"),
    ]
    console.print(kv_table(f"已导出知识库「{name}」", rows))


@run_cli
def kb_import(
    file: Path = typer.Argument(..., metavar="文件", help="`zhiwen kb export` 生成的文件"),
    as_name: str | None = typer.Option(None, "--as", help="导入后的知识库名称（默认：导出时的名称）"),
    replace: bool = typer.Option(False, "--replace", help="同名知识库已存在时整体替换它（成功后才替换）"),
    backend: str | None = typer.Option(
        None, "--backend", help="存储后端：embedded、postgresql://…、qdrant+local://目录（默认：本机设置）"
    ),
    embedder: str | None = typer.Option(
        None, "--embedder", help="向量模型（默认：导出时的模型；与导出时不同则重新向量化，可中断后续传）"
    ),
    as_json: bool = _JSON,
) -> None:
    """从导出文件导入知识库：先校验完整性与版本；全部写入成功后才出现（失败则不留任何残余）。

    本机向量模型与导出时相同（名称、版本、维度）时直接复用向量，否则重新向量化。
    """
    from zhiwen.portable import import_bundle
    from zhiwen.portable.progress import RichSteps

    with RichSteps() as steps:
        report = import_bundle(
            file, name=as_name, replace=replace, backend=backend, embedder=embedder, steps=steps
        )
    if as_json:
        print_json(report.as_dict())
        return
    rows = [
        ("存储", report.store),
        ("文档", f"{report.documents:,}"),
        ("段落", f"{report.chunks:,}"),
        ("复用向量", f"{report.vectors_reused:,}"),
        ("重新向量化", f"{report.embedded:,}"),
        ("替换了原知识库", "是" if report.replaced else "否"),
        ("用时", f"{report.seconds:.1f} 秒"),
    ]
    console.print(kv_table(f"已导入知识库「{report.kb}」", rows))


@run_cli
def backup(
    directory: Path = typer.Argument(..., metavar="目录", help="新的备份目录（不存在或为空）"),
    as_json: bool = _JSON,
) -> None:
    """备份整个数据目录（知识库、整理数据、提问记录、会话、导入队列；PostgreSQL 用 pg_dump），无需停服。"""
    from zhiwen.portable.backup import backup_home
    from zhiwen.portable.progress import RichSteps

    with RichSteps() as steps:
        report = backup_home(directory, steps=steps)
    if as_json:
        print_json(report.as_dict())
        return
    rows = [
        ("目录", report.path),
        ("文件", f"{report.files:,}（其中 SQLite 数据库 {report.sqlite:,}）"),
        ("大小", decimal(report.bytes)),
        ("PostgreSQL", "、".join(report.postgres) or None),
        ("用时", f"{report.seconds:.1f} 秒"),
    ]
    console.print(kv_table("备份完成", rows))


@run_cli
def restore(
    directory: Path = typer.Argument(..., metavar="目录", help="`zhiwen backup` 生成的备份目录"),
    home: Path | None = typer.Option(None, "--home", help="恢复到这个数据目录（默认：当前的 ZHIWEN_HOME）"),
    as_json: bool = _JSON,
) -> None:
    """从备份恢复数据目录：先逐个核对校验和；原数据目录改名保留（*.before-restore-时间）。服务运行时拒绝。"""
    from zhiwen.portable.backup import restore_home

    report = restore_home(directory, home=home)
    if as_json:
        print_json(report.as_dict())
        return
    rows = [
        ("数据目录", report.path),
        ("文件", f"{report.files:,}"),
        ("原数据目录移至", report.moved_aside),
        ("PostgreSQL", "、".join(report.postgres) or None),
        ("用时", f"{report.seconds:.1f} 秒"),
    ]
    console.print(kv_table("恢复完成", rows))


def register(app: typer.Typer) -> None:
    kb_app.command("export")(kb_export)
    kb_app.command("import")(kb_import)
    app.command("backup")(backup)
    app.command("restore")(restore)
