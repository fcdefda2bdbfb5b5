"""知问 zhiwen — a Chinese-first, offline-first RAG engine and question-answering server."""

__version__ = "0.1.0"
