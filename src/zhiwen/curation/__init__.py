"""Curation: a knowledge base's chunks in its owners' hands (see :mod:`zhiwen.curation.service`)."""

from zhiwen.curation.csvio import export_dictionary, export_synonyms, parse_dictionary, parse_synonyms
from zhiwen.curation.lexicon import KBTokenizer, Lexicon
from zhiwen.curation.model import Change, ChunkView, NewChunk, Overlay, question_id, question_target
from zhiwen.curation.service import Curation
from zhiwen.curation.sync import CurationHost
from zhiwen.curation.view import CuratedStore

__all__ = [
    "Change",
    "ChunkView",
    "CuratedStore",
    "Curation",
    "CurationHost",
    "KBTokenizer",
    "Lexicon",
    "NewChunk",
    "Overlay",
    "export_dictionary",
    "export_synonyms",
    "parse_dictionary",
    "parse_synonyms",
    "question_id",
    "question_target",
]
