// Telegram's HTML parse mode as the Bot API reads it, for the fake Bot API (./fake-telegram-server.ts)
// and the tests of our Markdown-to-HTML conversion.

const TAGS = new Set([
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "span",
  "tg-spoiler",
  "a",
  "code",
  "pre",
  "blockquote",
  "tg-emoji",
]);
const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

/** Parses Telegram HTML as the Bot API does: the visible text, or why it "can't parse entities". */
export function parseTelegramHtml(html: string): { text: string } | { error: string } {
  const stack: string[] = [];
  let text = "";
  for (let i = 0; i < html.length; ) {
    const rest = html.slice(i);
    if (html[i] === "<") {
      const tag = /^<(\/?)([a-z-]+)((?:\s+[a-z-]+="[^"<>]*")*)\s*>/i.exec(rest);
      const name = tag?.[2]?.toLowerCase();
      if (!tag || !name || !TAGS.has(name)) return { error: `Unsupported start tag at byte offset ${i}` };
      if (!tag[1]) stack.push(name!);
      else if (stack.pop() !== name) return { error: `Unmatched end tag "${name}" at byte offset ${i}` };
      i += tag[0].length;
    } else if (html[i] === "&") {
      const entity = /^&(lt|gt|amp|quot|#\d+|#x[0-9a-f]+);/i.exec(rest);
      if (!entity) return { error: `Bare & at byte offset ${i}` };
      const code = entity[1]!;
      text +=
        NAMED[code.toLowerCase()] ??
        String.fromCodePoint(code[1] === "x" || code[1] === "X" ? parseInt(code.slice(2), 16) : Number(code.slice(1)));
      i += entity[0].length;
    } else if (html[i] === ">") {
      return { error: `Unexpected > at byte offset ${i}` };
    } else {
      text += html[i++];
    }
  }
  return stack.length ? { error: `Can't find end tag corresponding to start tag "${stack.at(-1)}"` } : { text };
}
