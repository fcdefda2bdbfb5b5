"""The benchmark's LangChain peer (bench/langchain_peer.py) answers from precomputed vectors."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("langchain_community", reason="bench extra not installed: pip install -e '.[bench]'")
pytest.importorskip("faiss", reason="bench extra not installed: pip install -e '.[bench]'")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from langchain_peer import LangChainPeer
from zhiwen.embed import get_embedder


def test_peer_uses_given_vectors_only() -> None:
    emb = get_embedder("hash")
    texts = [
        "宫保鸡丁是一道川菜",
        "红烧肉用五花肉慢炖",
        "契税税率为百分之三至百分之五",
        "外国人入境应当办理签证",
    ]
    ids = ["p1", "p2", "p3", "p4"]
    vectors = emb.embed_passages(texts)
    calls: list[str] = []

    def query_fn(text: str) -> np.ndarray:
        calls.append(text)
        return emb.embed_query(text)

    peer = LangChainPeer(ids, texts, vectors, query_fn=query_fn, k=2)
    assert peer.search("契税税率")[0] == "p3"
    assert calls == ["契税税率"]  # one model call for the query, none for passages
    peer.set_query_vectors({"宫保鸡丁": emb.embed_query("宫保鸡丁")})
    assert peer.search("宫保鸡丁")[0] == "p1"
    assert calls == ["契税税率"]  # precomputed query vector: no model call
    assert peer.bm25_only("红烧肉")[0] == "p2"
    assert len(peer.search("签证")) <= 4
