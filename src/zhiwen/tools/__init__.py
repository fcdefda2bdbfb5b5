"""Tools an agent may call (OpenAI function format), their registry and the calling loop."""

from zhiwen.tools.base import Tool, validation_error
from zhiwen.tools.loop import PROTOCOL_NOTICE, PlannedCall, ToolCallRecord, ToolLoopResult, run_tool_loop
from zhiwen.tools.registry import ToolRegistry

__all__ = [
    "PROTOCOL_NOTICE",
    "PlannedCall",
    "Tool",
    "ToolCallRecord",
    "ToolLoopResult",
    "ToolRegistry",
    "run_tool_loop",
    "validation_error",
]
