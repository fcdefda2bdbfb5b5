"""The visa-free table (``country_visa_tags.tsv``) and its policy pages, as typed rows and documents.

Each TSV row becomes a :class:`VisaEntry` (country in both languages, visa-free days, policy
types, end date) and one :class:`~zhiwen.documents.Document` (id ``country/<ISO2>``) whose text
carries the Chinese and English names, so a question in either language finds it. Each distinct
policy page (``policies/*.md``) becomes one document (id ``policy/<file stem>``) headed by the
countries it applies to. The days come from the policy tag (``Mutual-90-Limit`` → 90), because
the table's ``Visa-Free Days`` column says 30 for every row.

Example::

    >>> table = load_visa_table(tsv_path, default_gazetteer())
    >>> row = table.get("RS")
    >>> row.days, row.primary_type, row.end_date
    (30, 'mutual', None)
    >>> table.get("FR").end_date
    datetime.date(2025, 12, 31)
"""

from __future__ import annotations

import csv
import hashlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from zhiwen.documents import Document
from zhiwen.errors import IngestError

from .countries import Country, Gazetteer

log = logging.getLogger(__name__)

POLICY_TYPE_ZH = {
    "mutual": "互免签证",
    "unilateral": "单方面免签",
    "regional": "海南入境免签",
    "transit": "过境免签",
}
TYPE_ORDER = ("mutual", "unilateral", "regional", "transit")
CONTINENT_ZH = {
    "Europe": "欧洲",
    "Asia": "亚洲",
    "Africa": "非洲",
    "North America": "北美洲",
    "South America": "南美洲",
    "Oceania": "大洋洲",
}
_TAG = re.compile(r"^(Mutual|Unilateral|Regional|Transit)-(\d+)(?:-(.*))?$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PolicyTag:
    """One tag of the ``Policies`` column, e.g. ``Unilateral-30-2025-12``."""

    raw: str
    type: str  # mutual | unilateral | regional | transit
    days: int
    qualifier: str = ""  # "Limit-180", "Valid", "2025-12", …

    @property
    def label_zh(self) -> str:
        unit = "天（240小时）" if self.type == "transit" and self.days == 10 else "天"
        text = f"{POLICY_TYPE_ZH[self.type]}{self.days}{unit}"
        if self.type == "regional":
            text += "（仅限海南）"
        if self.qualifier.lower().startswith("limit-180") or self.qualifier.lower() == "limit":
            text += "（任意180天内累计不超过90天）"
        elif self.qualifier.lower().startswith("limit-360"):
            text += "（每自然年累计不超过90天）"
        elif self.qualifier.lower() == "valid":
            text += "（护照有效期须6个月以上）"
        return text


def parse_tag(raw: str) -> PolicyTag | None:
    m = _TAG.match(raw.strip())
    if not m:
        return None
    return PolicyTag(
        raw=raw.strip(), type=m.group(1).lower(), days=int(m.group(2)), qualifier=m.group(3) or ""
    )


def parse_end_date(text: str) -> date | None:
    """``2025-12-31`` → a date; ``Endless`` / ``N/A`` / empty → None (no end date)."""
    text = text.strip()
    m = re.match(r"^(\d{4})-(\d{1,2})-(\d{1,2})$", text)
    return date(int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


@dataclass(frozen=True, slots=True)
class VisaEntry:
    """One country's row of the visa-free table."""

    country: Country
    name_in_table: str
    continent: str
    days_column: str
    tags: tuple[PolicyTag, ...]
    end_text: str  # as written: "2025-12-31", "Endless", "N/A"
    end_date: date | None
    last_check: str
    policy_file: str = ""  # the policies/*.md page the source site shows for this row

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(t for t in TYPE_ORDER if any(tag.type == t for tag in self.tags))

    @property
    def primary_type(self) -> str:
        return self.types[0] if self.types else "none"

    @property
    def primary(self) -> PolicyTag | None:
        return next((t for t in self.tags if t.type == self.primary_type), None)

    @property
    def days(self) -> int:
        primary = self.primary
        return primary.days if primary else 0

    @property
    def nationwide(self) -> bool:
        """Visa-free anywhere in mainland China (mutual/unilateral), not only Hainan or transit."""
        return self.primary_type in ("mutual", "unilateral")

    def expired(self, as_of: date) -> bool:
        return self.end_date is not None and self.end_date < as_of

    def end_zh(self) -> str:
        if self.end_date is not None:
            return self.end_date.isoformat()
        return "长期有效" if self.end_text.lower() == "endless" else "未注明"

    def summary_zh(self) -> str:
        """One line: country, days, type, end date (the lead of an offline answer)."""
        types = "、".join(t.label_zh for t in self.tags) or "无"
        return (
            f"{self.country.zh}（{self.country.en}）：免签停留 {self.days} 天；"
            f"政策类型：{types}；截止日期：{self.end_zh()}"
        )

    def to_document(self, policy_doc: str = "") -> Document:
        """The row as a document; ``policy_doc`` is the id of its policy page's document."""
        c = self.country
        types_en = ", ".join(t.raw for t in self.tags)
        lines = [
            f"{c.zh}（{c.en}）免签政策 Visa-free entry to China for citizens of {c.en}",
            f"国家 Country：{c.zh} / {c.en}（别名：{'、'.join(c.aliases[:6]) or '无'}）",
            f"所在大洲 Continent：{CONTINENT_ZH.get(self.continent, self.continent)} {self.continent}",
            f"免签停留天数 Visa-free days：{self.days} 天（{self.days} days）",
            f"政策类型 Policy type：{'、'.join(t.label_zh for t in self.tags)}（{types_en}）",
            f"主要类型 Primary type：{POLICY_TYPE_ZH.get(self.primary_type, '无')}（{self.primary_type}）",
            f"政策截止日期 Policy end date：{self.end_zh()}（{self.end_text}）",
            f"核对日期 Last checked：{self.last_check}",
        ]
        if self.primary_type == "unilateral" and self.end_date is not None:
            lines.append(
                f"说明：{c.zh}公民可凭普通护照单方面免签入境中国停留不超过{self.days}天，"
                f"政策有效期至{self.end_date.isoformat()}。"
            )
        elif self.primary_type == "mutual":
            lines.append(f"说明：中国与{c.zh}互免签证，双方公民免签入境停留不超过{self.days}天。")
        elif self.types:
            lines.append(f"说明：{c.zh}公民无全国范围免签，仅适用海南入境免签或过境免签。")
        return Document(
            id=f"country/{c.iso2}",
            title=f"{c.zh}（{c.en}）免签政策",
            text="\n".join(lines),
            metadata={
                "kind": "visa_country",
                "iso2": c.iso2,
                "country_zh": c.zh,
                "country_en": c.en,
                "days": self.days,
                "policy_type": self.primary_type,
                "policy_types": ",".join(self.types),
                "policies": types_en,
                "policies_zh": "、".join(t.label_zh for t in self.tags),
                "end_date": self.end_date.isoformat() if self.end_date else "",
                "last_check": self.last_check,
                "policy_file": self.policy_file,
                "policy_doc": policy_doc,
            },
        )


@dataclass(slots=True)
class VisaTable:
    entries: dict[str, VisaEntry] = field(default_factory=dict)  # ISO2 → row
    unknown: list[str] = field(default_factory=list)  # table names the gazetteer does not know

    def get(self, iso2: str) -> VisaEntry | None:
        return self.entries.get(iso2)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[VisaEntry]:
        return iter(self.entries.values())


def load_visa_table(tsv: Path, gazetteer: Gazetteer, policies_dir: Path | None = None) -> VisaTable:
    """Read ``country_visa_tags.tsv``; rows whose country the gazetteer lacks are listed in ``unknown``."""
    if not tsv.is_file():
        raise IngestError(f"visa table not found: {tsv}", message=f"导入失败：找不到免签政策表 {tsv.name}")
    table = VisaTable()
    with tsv.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            name = (row.get("Country") or "").strip()
            if not name:
                continue
            country = gazetteer.lookup(name)
            if country is None:
                table.unknown.append(name)
                log.warning("visa table: unknown country %r skipped", name)
                continue
            raw_tags = [t for t in (row.get("Policies") or "").split(",") if t.strip()]
            tags = tuple(tag for tag in (parse_tag(t) for t in raw_tags) if tag is not None)
            end_text = (row.get("Policy End Date") or "").strip()
            table.entries[country.iso2] = VisaEntry(
                country=country,
                name_in_table=name,
                continent=(row.get("Continent") or "").strip(),
                days_column=(row.get("Visa-Free Days") or "").strip(),
                tags=tags,
                end_text=end_text,
                end_date=parse_end_date(end_text),
                last_check=(row.get("Last Check") or "").strip(),
                policy_file=policy_file_for(raw_tags, policies_dir),
            )
    return table


def policy_file_for(raw_tags: list[str], policies_dir: Path | None) -> str:
    """The page the source site shows for a row: ``Mutual-30, Regional-30`` → ``mutual_30::regional_30.md``.

    The site shows an error page when that exact file is missing; we drop trailing tags until a
    page exists instead.
    """
    parts = [t.strip().lower().replace("-", "_") for t in raw_tags if t.strip()]
    if not parts:
        return "others.md"
    for n in range(len(parts), 0, -1):
        name = "::".join(parts[:n]) + ".md"
        if policies_dir is None or (policies_dir / name).is_file():
            return name
    return ""


def _pages(policies_dir: Path) -> dict[str, list[Path]]:
    """Policy pages grouped by content (several file names carry the same page)."""
    groups: dict[str, list[Path]] = {}
    for path in sorted(policies_dir.glob("*.md")) if policies_dir.is_dir() else []:
        if path.stem != "error":
            digest = hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()
            groups.setdefault(digest, []).append(path)
    return groups


def _page_id(path: Path) -> str:
    return f"policy/{path.stem.replace('::', '+')}"


def policy_doc_ids(policies_dir: Path) -> dict[str, str]:
    """Policy file name → the id of the document that carries its (possibly shared) content."""
    return {p.name: _page_id(paths[0]) for paths in _pages(policies_dir).values() for p in paths}


def policy_documents(table: VisaTable, policies_dir: Path) -> list[Document]:
    """One document per distinct policy page, headed by the countries it applies to."""
    users: dict[str, list[VisaEntry]] = {}
    for entry in table:
        if entry.policy_file:
            users.setdefault(entry.policy_file, []).append(entry)
    docs = []
    for paths in _pages(policies_dir).values():
        path = paths[0]
        entries = [e for p in paths for e in users.get(p.name, [])]
        body = path.read_text(encoding="utf-8").strip()
        heading = next((ln.lstrip("# ").strip() for ln in body.splitlines() if ln.startswith("#")), path.stem)
        names = "、".join(f"{e.country.zh} {e.country.en}" for e in entries)
        types = sorted({t for e in entries for t in e.types}, key=TYPE_ORDER.index)
        header = f"免签政策说明 Visa policy：{heading}\n"
        header += f"适用国家 Countries：{names or '表中未列出的国家（需办理签证）'}\n"
        header += f"政策类型：{'、'.join(POLICY_TYPE_ZH[t] for t in types) or '需办理签证'}\n\n"
        ends = {e.end_date for e in entries}
        end = next(iter(ends)) if len(ends) == 1 else None  # a page shared by rows of one end date
        docs.append(
            Document(
                id=_page_id(path),
                title=f"免签政策说明：{heading}",
                text=header + body,
                metadata={
                    "kind": "visa_policy",
                    "file": path.name,
                    "countries": len(entries),
                    "end_date": end.isoformat() if end else "",
                },
            )
        )
    return docs
