"""The small manual the curation tests curate: three documents, three sections each at most."""

from __future__ import annotations

from zhiwen.documents import Document

MANUAL = {
    "guide": (
        "安装与配置",
        "# 安装\n运行 pip install zhiwen 即可完成安装，需要 Python 3.11。\n\n"
        "## 配置模型\n在 config.toml 里填写大模型的地址和密钥。\n\n"
        "## 导入文档\n用 zhiwen index 命令导入 Markdown 和 PDF 文件。\n",
    ),
    "policy": (
        "售后政策",
        "# 退货\n商品签收后七天内可以申请退货，运费由买家承担。\n\n"
        "## 换货\n质量问题十五天内可以换货，运费由商家承担。\n\n"
        "## 发票\n电子发票在订单完成后自动发送到邮箱。\n",
    ),
    "recipes": (
        "家常菜",
        "# 土豆炖牛肉\n牛肉切块焯水，加入马铃薯块小火慢炖一小时。\n\n"
        "## 番茄炒蛋\n西红柿切块，鸡蛋打散炒熟后混合翻炒。\n",
    ),
}


def manual_docs(edit: dict[str, str] | None = None, only: list[str] | None = None) -> list[Document]:
    return [
        Document(id=doc_id, text=(edit or {}).get(doc_id, text), title=title, metadata={"kind": "manual"})
        for doc_id, (title, text) in MANUAL.items()
        if only is None or doc_id in only
    ]
