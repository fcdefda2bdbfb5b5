"""What an app is built from: the app contract, its context, events, and the helpers apps share
with the top layers (HTTP dependencies and envelope, console printing). It sits below the apps:
apps and the API/CLI import it; it imports no app. The one answer and citation types come from
the answer stage (:mod:`zhiwen.answer.model`); a turn of a conversation is the conversation
service's (:mod:`zhiwen.conversation.service`), which the app kit's ``BaseApp`` plugs into.
"""

from zhiwen.answer.model import Answer, Citation
from zhiwen.appkit.app import (
    AppContext,
    AskRequest,
    BaseApp,
    KBSpec,
    SetupReport,
    Standalone,
)
from zhiwen.appkit.events import AppEvent, sse_stream, to_sse

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
    "sse_stream",
    "to_sse",
]
