"""Properties: the numbers match a plain reference, grouping is a partition, export round-trips."""

from __future__ import annotations

import csv
import io
from datetime import UTC

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.questionlog import LoggedQuestion, SourceRef, StatRow
from zhiwen.questionlog.base import Phrasing
from zhiwen.questionlog.export import export_lines, read_csv_record, read_jsonl_record
from zhiwen.questionlog.grouping import DisjointSet, group_phrasings, near_pairs
from zhiwen.questionlog.model import ANSWER_TYPES, day_of
from zhiwen.questionlog.stats import percentile, summarise

T0 = 1_750_000_000.0

latency = st.floats(0, 60_000, allow_nan=False, allow_infinity=False)
stat_rows = st.builds(
    StatRow,
    at=st.floats(T0, T0 + 10 * 86_400),
    answer_type=st.sampled_from(ANSWER_TYPES),
    unanswered=st.booleans(),
    latency_ms=latency,
    llm_calls=st.integers(0, 5),
    prompt_tokens=st.integers(0, 10_000),
    completion_tokens=st.integers(0, 2_000),
    up=st.integers(0, 3),
    down=st.integers(0, 3),
)


@given(st.lists(latency, min_size=1, max_size=200), st.sampled_from([0, 5, 50, 95, 99, 100]))
def test_percentile_is_numpy_linear(values: list[float], q: int) -> None:
    assert np.isclose(percentile(values, q), np.percentile(values, q), rtol=1e-9, atol=1e-9)  # type: ignore[arg-type]


@given(st.lists(stat_rows, max_size=120))
@settings(max_examples=60, deadline=None)
def test_numbers_match_a_plain_reference(rows: list[StatRow]) -> None:
    stats = summarise(rows, UTC)
    by_day: dict[object, list[StatRow]] = {}
    for r in rows:
        by_day.setdefault(day_of(r.at, UTC), []).append(r)
    assert [d.day for d in stats.days] == sorted(by_day)
    for tally in [*stats.days, stats.overall]:
        mine = rows if tally.day is None else by_day[tally.day]
        n = len(mine)
        assert tally.questions == n
        assert tally.answered == sum(not r.unanswered for r in mine)
        assert tally.answered_rate == (sum(not r.unanswered for r in mine) / n if n else None)
        assert tally.faq_hit_rate == (sum(r.answer_type == "faq" for r in mine) / n if n else None)
        assert (tally.up, tally.down) == (sum(r.up for r in mine), sum(r.down for r in mine))
        assert tally.llm_calls == sum(r.llm_calls for r in mine)
        assert tally.prompt_tokens + tally.completion_tokens == sum(
            r.prompt_tokens + r.completion_tokens for r in mine
        )
        for q, got in ((50, tally.latency_p50_ms), (95, tally.latency_p95_ms)):
            want = float(np.percentile([r.latency_ms for r in mine], q)) if n else None
            assert got == want or (got is not None and want is not None and np.isclose(got, want))
    assert sum(d.questions for d in stats.days) == stats.overall.questions


phrasings = st.lists(
    st.builds(
        Phrasing,
        normal=st.text(min_size=1, max_size=6),
        question=st.text(alphabet="怎么建库格式支持哪些的吗", min_size=1, max_size=8),
        count=st.integers(1, 50),
        unanswered=st.just(0),
        last_at=st.floats(T0, T0 + 1000),
    ),
    max_size=40,
    unique_by=(lambda p: p.normal, lambda p: p.question),
)


@given(phrasings, st.integers(0, 2**31), st.floats(0.0, 1.0), st.sampled_from(["leader", "single"]))
@settings(max_examples=60, deadline=None)
def test_grouping_is_a_partition(items: list[Phrasing], seed: int, threshold: float, linkage: str) -> None:
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(len(items), 4)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-9
    row = {p.question: k for k, p in enumerate(items)}
    groups = group_phrasings(
        items,
        vectors=lambda texts: vecs[[row[t] for t in texts]],
        threshold=threshold,
        linkage=linkage,  # type: ignore[arg-type]
    )
    members = [v.normal for g in groups for v in g.variants]
    assert sorted(members) == sorted(p.normal for p in items)  # each exactly once
    assert sum(g.count for g in groups) == sum(p.count for p in items)
    assert [g.count for g in groups] == sorted((g.count for g in groups), reverse=True)
    where = {v.normal: k for k, g in enumerate(groups) for v in g.variants}
    texts = [p.question for p in items]
    if linkage == "single":  # every pair close enough (and not told apart) ends in one group
        for i, j in near_pairs(texts, vecs, threshold):
            assert where[items[i].normal] == where[items[j].normal]
    else:  # every member is close enough to its group's leader, the most asked of the group
        index = {p.normal: k for k, p in enumerate(items)}
        for g in groups:
            lead = index[g.variants[0].normal]
            for v in g.variants[1:]:
                assert float(vecs[lead] @ vecs[index[v.normal]]) >= threshold - 1e-6


def test_a_leader_does_not_chain() -> None:
    # A≈B and B≈C, but A and C are far apart: single linkage joins all three, a leader does not
    angle = np.deg2rad([0.0, 14.0, 28.0])
    vecs = np.stack([np.cos(angle), np.sin(angle)], axis=1).astype(np.float32)
    items = [
        Phrasing(n, t, c, 0, T0) for n, t, c in (("a", "甲问题", 5), ("b", "乙问题", 4), ("c", "丙问题", 3))
    ]
    chained = group_phrasings(items, vectors=lambda t: vecs, threshold=0.96, linkage="single", contrast=False)
    led = group_phrasings(items, vectors=lambda t: vecs, threshold=0.96, contrast=False)
    assert [g.count for g in chained] == [12]
    assert [g.count for g in led] == [9, 3]


def test_near_duplicates_join_but_contrasts_stay_apart() -> None:
    items = [
        Phrasing("a", "144小时过境免签是什么政策", 5, 0, T0),
        Phrasing("b", "240小时过境免签是什么政策", 4, 0, T0),
        Phrasing("c", "144小时过境免签是啥政策", 3, 0, T0),
    ]
    same = np.ones((3, 2), dtype=np.float32) / np.sqrt(2)  # every cosine is 1
    groups = group_phrasings(items, vectors=lambda texts: same, threshold=0.9)
    assert [(g.question, g.count, len(g.variants)) for g in groups] == [
        ("144小时过境免签是什么政策", 8, 2),
        ("240小时过境免签是什么政策", 4, 1),
    ]
    assert len(group_phrasings(items, vectors=lambda t: same, threshold=0.9, contrast=False)) == 1
    assert len(group_phrasings(items)) == 3  # no vectors: exact groups only


@given(st.lists(st.tuples(st.integers(0, 19), st.integers(0, 19)), max_size=40))
def test_disjoint_set_matches_connected_components(edges: list[tuple[int, int]]) -> None:
    s = DisjointSet(20)
    for a, b in edges:
        s.union(a, b)
    # reference: flood fill
    adj: dict[int, set[int]] = {i: set() for i in range(20)}
    for a, b in edges:
        adj[a].add(b)
        adj[b].add(a)
    for i in range(20):
        seen, todo = {i}, [i]
        while todo:
            for n in adj[todo.pop()] - seen:
                seen.add(n)
                todo.append(n)
        assert {j for j in range(20) if s.find(j) == s.find(i)} == seen


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
optional_texts = st.one_of(
    st.none(), st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)
)
finite = st.floats(-1e6, 1e6, allow_nan=False)
records = st.builds(
    LoggedQuestion,
    answer_id=st.text("0123456789abcdefghjkmnpqrstvwxyz", min_size=16, max_size=16),
    kb=st.sampled_from(["manual", "知识库"]),
    app=st.sampled_from(["qa", "policy"]),
    question=texts,
    answer_type=st.sampled_from(ANSWER_TYPES),
    answerable=st.one_of(st.none(), st.booleans()),
    standalone=optional_texts,
    fallback=st.one_of(st.none(), st.sampled_from(["no_llm", "timeout"])),
    faq_id=optional_texts,
    faq_score=st.one_of(st.none(), finite),
    sources=st.lists(
        st.builds(SourceRef, id=texts, title=texts, score=st.one_of(st.none(), finite), kb=optional_texts),
        max_size=3,
    ).map(tuple),
    latency_ms=st.floats(0, 1e6, allow_nan=False),
    llm_calls=st.integers(0, 9),
    prompt_tokens=st.integers(0, 10**6),
    completion_tokens=st.integers(0, 10**6),
    caller=st.text("0123456789abcdef", max_size=16),
    session_id=optional_texts,
    at=st.floats(0, 4e9, allow_nan=False),
)


@given(st.lists(records, max_size=8))
@settings(max_examples=80, deadline=None)
def test_export_round_trips(rows: list[LoggedQuestion]) -> None:
    jsonl = "".join(export_lines(rows, lambda ids: [], "jsonl"))
    # lines end at "\n" only: a text may hold U+2028 and the like, which str.splitlines also cuts at
    assert [read_jsonl_record(line) for line in jsonl.split("\n")[:-1]] == rows
    text = "".join(export_lines(rows, lambda ids: [], "csv"))
    assert text.startswith("\ufeff")
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    assert [read_csv_record(r) for r in reader] == rows
