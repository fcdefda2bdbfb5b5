"""Tables kept as tables: the model, row chunks with context, the KB's SQL catalogue, cell and SQL answers.

Loaders (:mod:`zhiwen.ingest`) turn the tables they meet into :class:`~.model.Table` and row
chunks (:mod:`.chunks`); generic QA asks :func:`~.answer.answer_from_tables` first. Import the
module you need: this face imports nothing.
"""
