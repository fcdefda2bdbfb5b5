"""The country gazetteer: every UN member state in Chinese and English, with common aliases.

Shipped as ``data/countries.tsv`` (ISO alpha-2/alpha-3, English name, Chinese name, aliases).
:meth:`Gazetteer.find` returns the countries a text mentions, in order of appearance, taking
the longest name at each position (``印度尼西亚`` is Indonesia, not India; ``South Sudan`` is not
Sudan). Latin names match case-insensitively at word boundaries; short all-capital aliases
(``US``, ``UK``, ``UAE``) match only in capitals, so "tell us" mentions no country. China, the
host country, is not in the list.

Example::

    >>> gaz = default_gazetteer()
    >>> [c.zh for c in gaz.find("美利坚和USA、Serbia 的机组人员")]
    ['美国', '塞尔维亚']
    >>> gaz.lookup("Korea (the Republic of Korea)").en
    'South Korea'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

_LATIN = re.compile(r"[A-Za-z]")
_ACRONYM = re.compile(r"^[A-Z.]{2,6}$")
# Chinese words that contain a country's name but do not mean it (上海地区 is not Haiti)
_FALSE_FRIENDS: dict[str, tuple[str, ...]] = {
    "海地": ("上海地", "沿海地", "近海地", "海地区", "海地面"),
    "蒙古": ("内蒙古",),
    "黑山": ("黑山县", "黑山镇"),
}


@dataclass(frozen=True, slots=True)
class Country:
    iso2: str
    iso3: str
    en: str  # canonical English name
    zh: str  # canonical Chinese name
    aliases: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every name the country is known by (canonical names first)."""
        return (self.zh, self.en, *self.aliases)

    @property
    def label(self) -> str:
        """``塞尔维亚（Serbia）``"""
        return f"{self.zh}（{self.en}）"


@dataclass(frozen=True, slots=True)
class Mention:
    country: Country
    text: str  # the name as written in the question
    start: int
    end: int


def normalise_name(name: str) -> str:
    """Lower case, parentheses and punctuation removed, spaces collapsed: a lookup key."""
    text = re.sub(r"[()（）,，.'’\-]", " ", name.strip().lower())
    return " ".join(text.split())


def _pattern(name: str) -> str:
    escaped = re.escape(name)
    if not _LATIN.search(name):
        return escaped
    if _ACRONYM.match(name):
        return rf"(?<![A-Za-z]){escaped}(?![A-Za-z])"
    plural = "s?" if name[-1].isalpha() and name[-1].lower() != "s" else ""  # Americans, Serbians
    return rf"(?<![A-Za-z])(?i:{escaped}{plural})(?![A-Za-z])"


class Gazetteer:
    """Countries and the regex that finds them in text."""

    def __init__(self, countries: Iterable[Country]) -> None:
        self.countries: tuple[Country, ...] = tuple(countries)
        self._by_name: dict[str, Country] = {}
        self._by_surface: dict[str, Country] = {}
        for country in self.countries:
            self._by_name.setdefault(country.iso2.lower(), country)
            self._by_name.setdefault(country.iso3.lower(), country)
            for name in country.names:
                self._by_name.setdefault(normalise_name(name), country)
                self._by_surface.setdefault(name.lower(), country)
        # longest first: a regex alternation takes the first alternative that matches
        surfaces = sorted({n for c in self.countries for n in c.names}, key=lambda n: (-len(n), n))
        self._regex = re.compile("|".join(f"(?:{_pattern(n)})" for n in surfaces))

    def __len__(self) -> int:
        return len(self.countries)

    def __iter__(self) -> Iterator[Country]:
        return iter(self.countries)

    def lookup(self, name: str) -> Country | None:
        """A country by any of its names or ISO codes (case and punctuation ignored)."""
        key = normalise_name(name)
        found = self._by_name.get(key)
        if found is None and "(" in name:  # "Netherlands (Holland)" → "Netherlands"
            found = self._by_name.get(normalise_name(name.split("(")[0]))
        return found

    def mentions(self, text: str) -> list[Mention]:
        """Every country name in ``text``, left to right, longest match at each position."""
        out = []
        for m in self._regex.finditer(text):
            surface = m.group(0).lower()
            country = self._by_surface.get(surface) or self._by_surface.get(surface[:-1])
            if country is not None and not _false_friend(text, m.group(0), m.start()):
                out.append(Mention(country, m.group(0), m.start(), m.end()))
        return out

    def find(self, text: str) -> list[Country]:
        """The distinct countries ``text`` mentions, in order of first appearance."""
        seen: dict[str, Country] = {}
        for mention in self.mentions(text):
            seen.setdefault(mention.country.iso2, mention.country)
        return list(seen.values())


def _false_friend(text: str, name: str, start: int) -> bool:
    for word in _FALSE_FRIENDS.get(name, ()):
        offset = word.find(name)
        begin = start - offset
        if begin >= 0 and text[begin : begin + len(word)] == word:
            return True
    return False


def load_gazetteer(path: str | Path) -> Gazetteer:
    """Read a gazetteer TSV (``#`` comments, a header row, then one country per line)."""
    return Gazetteer(_parse(Path(path).read_text(encoding="utf-8")))


def _parse(text: str) -> Iterator[Country]:
    header_seen = False
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if not header_seen:
            header_seen = True
            continue
        cols = [c.strip() for c in line.split("\t")]
        cols += [""] * (5 - len(cols))
        aliases = tuple(a.strip() for a in cols[4].split("|") if a.strip())
        yield Country(iso2=cols[0], iso3=cols[1], en=cols[2], zh=cols[3], aliases=aliases)


@lru_cache(maxsize=1)
def default_gazetteer() -> Gazetteer:
    """The gazetteer shipped with the app (``data/countries.tsv``)."""
    text = resources.files("zhiwen.apps.policy").joinpath("data/countries.tsv").read_text(encoding="utf-8")
    return Gazetteer(_parse(text))
