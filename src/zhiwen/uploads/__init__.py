"""Uploads and documents: the durable queue, the index worker, the ledger, one service.

Routes and the CLI call :class:`UploadService` (:mod:`zhiwen.uploads.service`); nothing here
knows HTTP. Modules: ``model`` (a job and its files), ``jobqueue`` (the SQLite queue),
``budget`` (its caps), ``names`` and ``spool`` (an upload as it arrives), ``indexing`` (one
file into its KB), ``worker``, ``finish`` and ``recovery`` (running jobs, ending them, resuming
them after a restart), ``ledger`` (the document list).
"""

from zhiwen.uploads.ledger import DocumentEntry
from zhiwen.uploads.model import Job, JobFile
from zhiwen.uploads.service import UploadService
from zhiwen.uploads.spool import FileTooLarge, UploadSlot

__all__ = ["DocumentEntry", "FileTooLarge", "Job", "JobFile", "UploadService", "UploadSlot"]
