"""A knowledge base's dictionary and synonym groups, and the background re-tokenising they start.

Setting the words (or the groups, whose terms become whole words too) is one recorded,
undoable change: ``curation.sqlite`` gets the new list and the terms whose tokens changed
(``tokens_pending``), this process's tokenizer takes the new :class:`~zhiwen.curation.lexicon.Lexicon`
at once (queries use it from the next search), and a daemon thread re-tokenizes the chunks that
contain one of those terms, a batch at a time (:meth:`~zhiwen.store.base.Store.set_tokens`: no
re-embedding), each batch a short write — searches go on meanwhile. An interrupted run (the
process ended) is resumed by the next open of the KB (:meth:`CurationWords.resume`).

Example::

    kb.curation.set_words(["知识库管理员", "Model-X"], actor=fingerprint)
    kb.curation.set_groups([["土豆", "马铃薯", "洋芋"]], actor=fingerprint, background=False)
    kb.curation.set_groups(parse_synonyms(csv_bytes), actor=fingerprint)
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from zhiwen.curation import checks
from zhiwen.curation.db import CurationDB
from zhiwen.curation.lexicon import Lexicon, WordMatcher
from zhiwen.curation.model import Change, question_target
from zhiwen.errors import InvalidParameter

if TYPE_CHECKING:
    from zhiwen.curation.sync import CurationHost

log = logging.getLogger(__name__)

_PENDING = "tokens_pending"
_BATCH = 500


class CurationWords:
    """Dictionary, synonyms and re-tokenising of :class:`~zhiwen.curation.service.Curation`."""

    host: CurationHost
    db: CurationDB
    _retokenizer: threading.Thread | None
    _retokenize_lock: threading.Lock
    _stop: threading.Event
    _again: threading.Event

    def words(self) -> tuple[str, ...]:
        return self.host.tokenizer.lexicon.words

    def groups(self) -> tuple[tuple[str, ...], ...]:
        return self.host.tokenizer.lexicon.groups

    def set_words(self, words: Iterable[str], *, actor: str, background: bool = True) -> Change | None:
        """The KB's dictionary, replaced (None: it was already that)."""
        clean = checks.clean_words(words)
        return self._set("dictionary", actor, background, words=clean)

    def set_groups(
        self, groups: Iterable[Sequence[str]], *, actor: str, background: bool = True
    ) -> Change | None:
        """The KB's synonym groups, replaced (None: they were already those)."""
        clean = checks.clean_groups(groups)
        return self._set("synonyms", actor, background, groups=clean)

    def _set(
        self,
        action: str,
        actor: str,
        background: bool,
        *,
        words: tuple[str, ...] | None = None,
        groups: tuple[tuple[str, ...], ...] | None = None,
        undoes: int | None = None,
    ) -> Change | None:
        with self.host.writing():
            old = self.host.tokenizer.lexicon
            new = Lexicon.build(
                old.words if words is None else words, old.groups if groups is None else groups, old.keywords
            )
            if (new.words, new.groups) == (old.words, old.groups) and undoes is None:
                return None
            changed = set(old.matcher.words ^ new.matcher.words) | self._pending()
            before = list(old.words) if words is not None else [list(g) for g in old.groups]
            after = list(new.words) if words is not None else [list(g) for g in new.groups]
            with self.host.changing(), self.db.transaction() as tx:
                if words is not None:
                    tx.set_words(new.words)
                if groups is not None:
                    tx.set_groups(new.groups)
                tx.set_meta(_PENDING, json.dumps(sorted(changed), ensure_ascii=False) if changed else None)
                change_id = tx.log(action if undoes is None else "undo", actor, action, before, after)
                if undoes is not None:
                    tx.mark_undone(undoes)
            self.host.tokenizer.use(new)
            self.host.bump_revision()
        self.resume(background=background)
        return self.db.change(change_id)

    def restore(self, change: Change, actor: str) -> Change:
        """Undo a dictionary or synonym change: the list goes back to its ``before`` (refused when
        a later change replaced the list since)."""
        lexicon = self.host.tokenizer.lexicon
        now = list(lexicon.words) if change.action == "dictionary" else [list(g) for g in lexicon.groups]
        if now != change.after:
            what = "词典" if change.action == "dictionary" else "同义词"
            raise InvalidParameter(
                f"{change.action} changed since change {change.id}",
                message=f"{what}在这次修改之后又被修改过，请先撤销后面的修改",
            )
        if change.action == "dictionary":
            done = self._set(
                "dictionary", actor, True, words=checks.clean_words(change.before), undoes=change.id
            )
        else:
            done = self._set(
                "synonyms", actor, True, groups=checks.clean_groups(change.before), undoes=change.id
            )
        assert done is not None
        return done

    # -- re-tokenising ----------------------------------------------------------------------
    def _pending(self) -> set[str]:
        raw = self.db.meta(_PENDING) if self.db.exists() else None
        return set(json.loads(raw)) if raw else set()

    def resume(self, *, background: bool = True) -> None:
        """Re-tokenize the chunks a dictionary change touched, if any is pending."""
        if not self._pending():
            return
        if not background:
            self.retokenize()
            return
        with self._retokenize_lock:
            if self._retokenizer is not None and self._retokenizer.is_alive():
                self._again.set()
                return
            self._retokenizer = threading.Thread(target=self._run, name="zhiwen-retokenize", daemon=True)
            self._retokenizer.start()

    def _run(self) -> None:
        try:
            while True:
                self._again.clear()
                self.retokenize()
                if not self._again.is_set() or self._stop.is_set():
                    return
        except Exception:  # the next open resumes it; searches work with the tokens they have
            log.exception("re-tokenising knowledge base %s failed", self.host.name)

    def retokenize(self) -> int:
        """Re-tokenize, batch by batch, every chunk containing a pending term; the chunks rewritten."""
        pending = self._pending()
        if not pending:
            return 0
        matcher = WordMatcher(pending)
        ids = self.host.store.list_chunk_ids()
        done = 0
        for start in range(0, len(ids), _BATCH):
            if self._stop.is_set():
                return done
            done += self._retokenize_batch(ids[start : start + _BATCH], matcher)
        with self.host.writing():
            if self._pending() == pending:  # no newer change meanwhile: its own run comes next
                with self.db.transaction() as tx:
                    tx.set_meta(_PENDING, None)
            if done:
                self.host.bump_revision()
        log.info("re-tokenised %d chunks of %s", done, self.host.name)
        return done

    def _retokenize_batch(self, ids: Sequence[str], matcher: WordMatcher) -> int:
        tokenizer = self.host.tokenizer
        with self.host.writing():
            chunks = [c for c in self.host.store.get_chunks(ids) if matcher.counts(c.embed_text.lower())]
            if not chunks:
                return 0
            tokens = [
                tokenizer.chunk_tokens(c, keywords=() if question_target(c.id) else None) for c in chunks
            ]
            with self.host.changing():
                self.host.store.set_tokens([c.id for c in chunks], tokens)
        return len(chunks)

    def stop(self) -> None:
        self._stop.set()
        thread = self._retokenizer
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
