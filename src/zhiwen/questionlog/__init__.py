"""What people ask: the question log of every KB, feedback on every answer, the owner's lists
(unanswered, disliked, most asked), numbers and export.

Not to be confused with :mod:`zhiwen.retrieve.feedback` (pseudo-relevance feedback in search):
ratings here are for the KB's owner and never change a ranking.
"""

from zhiwen.questionlog.access import LogCaller, may_rate, may_read_log, require_log_reader
from zhiwen.questionlog.base import Phrasing, QuestionStore, Span, StatRow
from zhiwen.questionlog.errors import AnswerNotFound
from zhiwen.questionlog.export import MEDIA_TYPES, ExportFormat
from zhiwen.questionlog.grouping import AskedGroup, group_phrasings
from zhiwen.questionlog.model import (
    FEEDBACK_REASONS,
    Feedback,
    ListedQuestion,
    LoggedQuestion,
    LogWindow,
    QuestionPage,
    SourceRef,
    new_answer_id,
    sources_of,
)
from zhiwen.questionlog.service import QuestionLog, open_question_log
from zhiwen.questionlog.stats import LogStats, Tally

__all__ = [
    "FEEDBACK_REASONS",
    "MEDIA_TYPES",
    "AnswerNotFound",
    "AskedGroup",
    "ExportFormat",
    "Feedback",
    "ListedQuestion",
    "LogCaller",
    "LogStats",
    "LogWindow",
    "LoggedQuestion",
    "Phrasing",
    "QuestionLog",
    "QuestionPage",
    "QuestionStore",
    "SourceRef",
    "Span",
    "StatRow",
    "Tally",
    "group_phrasings",
    "may_rate",
    "may_read_log",
    "new_answer_id",
    "open_question_log",
    "require_log_reader",
    "sources_of",
]
