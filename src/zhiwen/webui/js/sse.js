// Server-sent events over a POST (EventSource can only GET). zhiwen's streams put the event
// type in both the SSE "event:" field and the JSON "data:" ({"type": "delta", "text": "…"}).
// A request refused before the stream starts (4xx with an envelope) throws ApiError; an
// in-band {"type": "error"} event is handed to onEvent like any other.

import { fetchWithKey } from "./auth.js";
import { errorFrom, networkError } from "./util.js";

function parseFrame(frame) {
  let type = "message";
  const data = [];
  for (const line of frame.split("\n")) {
    if (!line || line.startsWith(":")) continue; // comment / ping
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") type = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return null;
  let payload;
  try {
    payload = JSON.parse(data.join("\n"));
  } catch {
    payload = { text: data.join("\n") };
  }
  return { type: payload.type || type, ...payload };
}

/** POST ``body`` to ``path`` and call ``onEvent(event)`` for every event; resolves at the end. */
export async function streamEvents(path, body, onEvent, { signal } = {}) {
  let resp;
  try {
    resp = await fetchWithKey(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal,
    });
  } catch (e) {
    throw networkError(e);
  }
  const type = resp.headers.get("content-type") || "";
  if (!resp.ok || !type.includes("text/event-stream")) throw await errorFrom(resp);
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (e) {
      throw networkError(e);
    }
    if (chunk.done) break;
    buffer += chunk.value;
    // sse-starlette ends lines with \r\n: a \r at the end of a chunk waits for its \n
    const held = buffer.endsWith("\r") ? "\r" : "";
    buffer = buffer.slice(0, buffer.length - held.length).replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = parseFrame(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (event) onEvent(event);
    }
    buffer += held;
  }
  const last = parseFrame(buffer.trim());
  if (last) onEvent(last);
}
