"""The app contract: what an app is built from and how the top layers find it.

:class:`BaseApp` (the hooks an app declares), :class:`AppContext` (what it answers with),
:mod:`.registry` (who answers a KB, and is it ready), :mod:`.context` (a context outside a
request), :mod:`.setup` (an app's setup) and :mod:`.generic_qa` (the answerer of a KB no app
claims). It sits below the apps and imports none of them; the helpers an app's routes use are
:mod:`zhiwen.httpkit`'s, those of its commands :mod:`zhiwen.clikit`'s. The one answer and citation
types come from the answer stage (:mod:`zhiwen.answer.model`); a turn of a conversation is the
conversation service's (:mod:`zhiwen.conversation.service`), which ``BaseApp`` plugs into.

Example::

    from zhiwen.appkit import Answer, AppContext, AskRequest, BaseApp, KBSpec, Standalone
"""

from zhiwen.answer.events import AppEvent
from zhiwen.answer.model import Answer, Citation
from zhiwen.appkit.app import (
    AppContext,
    AskRequest,
    BaseApp,
    KBSpec,
    SetupReport,
    Standalone,
)

__all__ = [
    "Answer",
    "AppContext",
    "AppEvent",
    "AskRequest",
    "BaseApp",
    "Citation",
    "KBSpec",
    "SetupReport",
    "Standalone",
]
