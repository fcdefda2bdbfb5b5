"""Incremental sync of a KB's remembered sources (folders, page URLs, sitemaps).

* :mod:`zhiwen.sync.sources` — what a source is; the KB's ``sources``/``sync_interval``;
* :mod:`zhiwen.sync.listing` — a source's documents, each with a stable name and a hash;
* :mod:`zhiwen.sync.state` — what the last sync stored (``<kb>/sync.json``) and its result;
* :mod:`zhiwen.sync.run` — one sync: only what changed is parsed and embedded, deletions
  propagate, owners' edits stay;
* :mod:`zhiwen.sync.service` — syncs in the background for a server: on demand (the API) and on
  each KB's schedule, one at a time per KB.

Import from the modules (the package imports nothing: ``zhiwen index`` reaches
:mod:`zhiwen.sync.sources` without the HTTP client).
"""
