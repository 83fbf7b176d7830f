// Turning transcript messages into DOM nodes. Model output and chat messages never reach the DOM
// as HTML unless they went through marked and then DOMPurify; everything else is textContent.
import { marked } from "/ui/vendor/marked.js";
import DOMPurify from "/ui/vendor/purify.js";

const SAFE_URL = /^(?:https?:|mailto:|#|\/)/i;

/** The mark of a reply the send policy kept from its chat (the transcript's `withheld`). */
const WITHHELD = "not delivered: sending is off here (/send on turns it back on)";

// Links open in a new tab without access to this page; any other scheme (javascript:, data:) loses its href.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    const href = node.getAttribute("href") ?? "";
    if (!SAFE_URL.test(href.trim())) node.removeAttribute("href");
    else {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  }
});

/** Markdown to sanitized DOM nodes (GitHub-flavoured, line breaks kept); no images: they would be requests to other hosts. */
export function markdownFragment(text) {
  const html = marked.parse(text, { gfm: true, breaks: true, async: false });
  return DOMPurify.sanitize(html, {
    RETURN_DOM_FRAGMENT: true,
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "img", "svg", "math"],
    FORBID_ATTR: ["style"],
  });
}

/** The text of a transcript message's content (a string or blocks). */
export function textOf(message) {
  if (typeof message.content === "string") return message.content;
  return (message.content ?? [])
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("");
}

function parsedResult(content) {
  if (typeof content !== "string") return content;
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

/** One short phrase for a tool's result: "3 rows", "error: ...", "ok". */
export function resultSummary(block) {
  if (!block) return "…";
  let value = parsedResult(block.content);
  if (Array.isArray(value) && value.length === 1 && value[0]?.type === "text") value = parsedResult(value[0].text);
  if (block.isError) return `error: ${String(typeof value === "string" ? value : JSON.stringify(value)).slice(0, 80)}`;
  if (Array.isArray(value)) return `${value.length} rows`;
  if (value && typeof value === "object") {
    if (value.status === "error") return `error: ${String(value.error ?? "").slice(0, 80)}`;
    const list = Object.values(value).find(Array.isArray);
    if (typeof value.count === "number") return `${value.count} rows`;
    if (list) return `${list.length} rows`;
    if (typeof value.status === "string") return value.status;
    return "ok";
  }
  const text = String(value ?? "");
  return text.length > 60 ? `${text.slice(0, 59)}…` : text || "ok";
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A collapsed tool call: `sessions_list -> 3 rows`, its arguments and result one click away. */
function toolNode(call, result) {
  const details = el("details", "tool");
  details.append(el("summary", "", `${call.name} -> ${resultSummary(result)}`));
  const body = { arguments: call.arguments, result: result ? parsedResult(result.content) : undefined };
  details.append(el("pre", "", JSON.stringify(body, null, 2)));
  return details;
}

function labelFor(message) {
  if (message.announce) return "Sub-agent";
  if (message.command) return message.role === "user" ? "Command" : "Command reply";
  const channel = message.provenance?.channel;
  if (message.role === "user" && message.provenance?.kind === "session")
    return `From ${message.provenance.sessionKey ?? "another session"}`;
  if (message.role === "user" && channel && channel !== "webchat") return `Via ${channel}`;
  return undefined;
}

/** A chat bubble: user text as text, everything an agent or a command wrote as sanitized markdown. */
export function bubble(message, text) {
  const classes = ["msg", message.role === "user" ? "user" : "assistant"];
  if (message.command) classes.push("command");
  if (message.announce) classes.push("announce");
  const node = el("div", classes.join(" "));
  const label = labelFor(message);
  if (label) node.append(el("span", "label", label));
  // The pending view finds a typed message here once its turn wrote it (see app.js, renderPending).
  if (message.role === "user" && message.runId) node.dataset.runId = message.runId;
  if (message.role === "user") node.append(document.createTextNode(text));
  else node.append(markdownFragment(text));
  if (message.withheld) node.append(el("span", "state withheld", WITHHELD));
  return node;
}

/**
 * The nodes of a list of transcript messages: user and assistant bubbles, each tool call one
 * collapsed line with its result, system lines as notes.
 */
export function renderMessages(messages) {
  const results = new Map();
  for (const m of messages)
    if (m.role === "toolResult" && Array.isArray(m.content))
      for (const b of m.content) if (b.type === "toolResult") results.set(b.toolCallId, b);
  const nodes = [];
  for (const m of messages) {
    if (m.role === "toolResult" || m.role === "toolCall") continue;
    if (m.role === "system") {
      nodes.push(el("p", "muted", textOf(m)));
      continue;
    }
    const text = textOf(m);
    if (text.trim()) nodes.push(bubble(m, text));
    if (Array.isArray(m.content))
      for (const b of m.content) if (b.type === "toolCall") nodes.push(toolNode(b, results.get(b.id)));
  }
  return nodes;
}
