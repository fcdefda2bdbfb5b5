"""What an app is built from: the app contract, its context, events, and the helpers apps share
with the top layers (HTTP dependencies and envelope, console printing). It sits below the apps:
apps and the API/CLI import it; it imports no app.
"""

from zhiwen.appkit.app import (
    AppAnswer,
    AppContext,
    AskRequest,
    BaseApp,
    Citation,
    KBSpec,
    SetupReport,
    done_payload,
)
from zhiwen.appkit.events import AppEvent, sse_stream, to_sse

__all__ = [
    "AppAnswer",
    "AppContext",
    "AppEvent",
    "AskRequest",
    "BaseApp",
    "Citation",
    "KBSpec",
    "SetupReport",
    "done_payload",
    "sse_stream",
    "to_sse",
]
