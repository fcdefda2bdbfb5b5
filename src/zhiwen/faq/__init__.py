"""FAQ entries answered word for word: the entry model, the file import and the matcher."""

from zhiwen.faq.errors import FAQFileTooLarge, FAQImportError, RowProblem
from zhiwen.faq.importer import ImportedFAQ, check_conflicts, read_faq
from zhiwen.faq.model import FAQDecision, FAQEntry, FAQMatch, FAQMiss, FAQSuggestion, entry_id_for
from zhiwen.faq.normalize import normalise_question

__all__ = [
    "FAQDecision",
    "FAQEntry",
    "FAQFileTooLarge",
    "FAQImportError",
    "FAQMatch",
    "FAQMiss",
    "FAQSuggestion",
    "ImportedFAQ",
    "RowProblem",
    "check_conflicts",
    "entry_id_for",
    "normalise_question",
    "read_faq",
]
