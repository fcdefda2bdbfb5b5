"""A knowledge base as one portable file, and backups of a live home.

* :func:`export_kb` / :func:`import_bundle` — a KB (documents, chunks, vectors, everything its
  owners curated, settings and tuning) to a checksummed, versioned bundle and back, across the
  embedded store, PostgreSQL and Qdrant (:mod:`zhiwen.portable.export`,
  :mod:`zhiwen.portable.importer`, the format in :mod:`zhiwen.portable.bundle`);
* :func:`backup_home` / :func:`restore_home` — a consistent snapshot of a running home and its
  restore (:mod:`zhiwen.portable.backup`).

Example::

    export_kb(open_kb("manual"), Path("manual.zwkb"))
    import_bundle(Path("manual.zwkb"), name="manual_pg", backend="postgresql://…/zhiwen")
"""

from zhiwen.portable.export import ExportReport, export_kb
from zhiwen.portable.importer import ImportReport, KnowledgeBaseExists, import_bundle
from zhiwen.portable.manifest import FORMAT_VERSION, BundleError, Manifest

__all__ = [
    "FORMAT_VERSION",
    "BundleError",
    "ExportReport",
    "ImportReport",
    "KnowledgeBaseExists",
    "Manifest",
    "export_kb",
    "import_bundle",
]
