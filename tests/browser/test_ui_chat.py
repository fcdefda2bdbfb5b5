"""通用问答 in Chromium: the page itself, streaming, citations, history, retry, errors, sanitizing."""

from __future__ import annotations

import re
from typing import Any

from ui_steps import CHAT_QUESTION, chat, idle, send, tab

# The harness re-chunks one streamed response into small pieces with pauses (a slow network),
# so the test can see the answer grow while the request is still in flight.
SLOW_STREAM = """
(() => {
  const realFetch = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const resp = await realFetch(input, init);
    if (!window.__slowStream || !String(input).includes("/api/v1/qa") || !resp.body) return resp;
    const reader = resp.body.getReader();
    const body = new ReadableStream({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        for (let i = 0; i < value.length; i += 48) {
          controller.enqueue(value.slice(i, i + 48));
          await new Promise((r) => setTimeout(r, 15));
        }
      },
    });
    return new Response(body, { status: resp.status, headers: resp.headers });
  };
})();
"""


def test_page_title_tabs_and_keyboard(page: Any) -> None:
    assert "知问" in page.title()
    for name in ("chat", "property", "policy", "advisor", "calc"):
        assert page.get_by_test_id(f"app-tab-{name}").is_visible()
    assert page.get_by_test_id("chat-input").is_visible() and page.get_by_test_id("chat-send").is_visible()
    # arrow keys move between tabs (roving tabindex), and the question box hides on the calculators
    page.get_by_test_id("app-tab-chat").focus()
    page.keyboard.press("ArrowRight")
    assert page.get_by_test_id("app-tab-property").get_attribute("aria-selected") == "true"
    page.keyboard.press("End")
    assert page.get_by_test_id("app-tab-kbs").get_attribute("aria-selected") == "true"
    tab(page, "calc")
    assert not page.get_by_test_id("chat-input").is_visible()
    # every form control has an accessible name
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll('input, select, textarea, button')]
              .filter((n) => n.offsetParent !== null || n.closest('[hidden]') === null)
              .filter((n) => n.type !== 'hidden' && !n.closest('label') && !n.labels?.length
                       && !n.getAttribute('aria-label') && !n.textContent.trim())
              .map((n) => n.id || n.outerHTML.slice(0, 60))"""
    )
    assert unnamed == []


def test_chat_streams_markdown_with_sources(page: Any) -> None:
    page.add_init_script(SLOW_STREAM)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.evaluate("window.__slowStream = true")
    tab(page, "chat")
    page.select_option("#chat-kb", "manual")
    send(page, CHAT_QUESTION)
    answer = page.locator("#chat-thread [data-testid=chat-answer]").last
    # streaming: part of the answer is on screen while the request is still in flight
    page.wait_for_function(
        """() => { const a = [...document.querySelectorAll('#chat-thread [data-testid=chat-answer]')].pop();
                   return a && a.dataset.busy === 'true' && a.querySelector('.md > :not(.typing)'); }"""
    )
    assert page.get_by_test_id("chat-input").evaluate("n => n.closest('form').dataset.busy") == "true"
    idle(page, "#chat-thread [data-testid=chat-answer]")
    text = answer.inner_text()
    assert "大模型" in text
    # markdown became elements (emphasis, lists, code), never literal asterisks or backticks
    assert answer.locator(".md strong, .md li, .md code, .md table").count() >= 1
    assert "**" not in text and "```" not in text
    assert answer.get_by_test_id("source").count() >= 3
    assert "摘录式回答" in answer.locator(".flags").inner_text()


def test_citation_opens_source_chunk(page: Any) -> None:
    answer = chat(page)
    answer.get_by_test_id("source").first.click()
    dialog = page.locator("#source-dialog")
    dialog.wait_for(state="visible")
    page.wait_for_selector("#source-dialog pre.chunk-text")
    assert "配置大模型" in page.locator("#source-dialog-title").inner_text()
    assert "OpenAI" in dialog.locator("pre.chunk-text").first.inner_text()
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    # the [1] marker inside the answer opens the same source
    answer.locator("button.cite").first.click()
    dialog.wait_for(state="visible")
    assert "[1]" in page.locator("#source-dialog-title").inner_text()
    page.locator("#source-dialog-close").click()


def test_history_survives_reload_and_retry_asks_again(page: Any) -> None:
    chat(page, "番茄炒蛋怎么做", kb="recipes")  # a recipe KB: answered by the recipes app
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    restored = page.locator("#chat-thread [data-testid=chat-answer]")
    assert restored.count() == 1 and restored.get_by_test_id("source").count() >= 1
    assert "番茄炒蛋怎么做" in page.locator("#chat-thread .msg-user").first.inner_text()
    restored.locator("[data-action=copy]").click()
    page.wait_for_selector(".toast")
    restored.locator("[data-action=retry]").click()
    page.wait_for_function(
        "() => document.querySelectorAll('#chat-thread [data-testid=chat-answer]').length === 2"
    )
    idle(page, "#chat-thread [data-testid=chat-answer]")
    assert page.locator("#chat-thread [data-testid=chat-answer]").last.get_by_test_id("source").count() >= 1
    page.locator("#chat-clear").click()
    assert page.locator("#chat-thread [data-testid=chat-answer]").count() == 0
    assert page.evaluate("localStorage.getItem('zhiwen.chat.history.v1')") is None


def test_server_error_is_shown_inline(page: Any, watch: Any) -> None:
    watch.allow_http_errors = True  # the 404 below is the point of the test
    tab(page, "chat")
    # a KB deleted after the page loaded: the server's Chinese message appears in the answer
    page.evaluate("document.querySelector('#chat-kb').add(new Option('gone', 'gone'))")
    page.select_option("#chat-kb", "gone")
    send(page, "还在吗")
    idle(page, "#chat-thread [data-testid=chat-answer]")
    error = page.locator("#chat-thread [data-testid=chat-answer] [data-testid=error]")
    assert re.search(
        r"知识库不存在：gone（导入文档即可建立：zhiwen index --kb gone <目录>）（错误码 3004）",
        error.inner_text(),
    )
    # an empty question never reaches the server
    page.get_by_test_id("chat-input").fill("   ")
    page.get_by_test_id("chat-send").click()
    assert "请输入问题" in page.locator("#composer-hint").inner_text()


def test_markdown_renderer_never_emits_html(page: Any) -> None:
    result = page.evaluate(
        """async () => {
          const { renderMarkdown } = await import('/static/js/markdown.js');
          const box = document.createElement('div');
          box.append(renderMarkdown([
            '<img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script>',
            '[点我](javascript:window.__pwned=3) [官网](https://example.com) **粗体** *斜体* `代码`',
            '',
            '| 列 | 值 |', '|---|---:|', '| <b>a</b> | 1 |',
            '',
            '1. 第一', '2. 第二', '   - 嵌套',
            '',
            '```', '<i>code</i>', '```',
          ].join('\\n'), { onCite: () => {} }));
          document.body.append(box);
          const out = {
            img: box.querySelectorAll('img, script, b, i').length,
            js: [...box.querySelectorAll('a')].filter((a) => !/^https?:/.test(a.href)).length,
            links: box.querySelectorAll('a[href^="https://"][rel~="noopener"]').length,
            strong: box.querySelectorAll('strong').length, em: box.querySelectorAll('em').length,
            table: box.querySelectorAll('table td').length,
            right: box.querySelector('td + td').style.textAlign,
            ol: box.querySelectorAll('ol > li').length, nested: box.querySelectorAll('ol li ul li').length,
            pre: box.querySelector('pre').textContent, pwned: window.__pwned || 0,
          };
          box.remove();
          return out;
        }"""
    )
    assert result == {
        "img": 0,
        "js": 0,
        "links": 1,
        "strong": 1,
        "em": 1,
        "table": 2,
        "right": "right",
        "ol": 2,
        "nested": 1,
        "pre": "<i>code</i>",
        "pwned": 0,
    }
