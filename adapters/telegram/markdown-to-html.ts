import { escapeHtml, renderInline } from "./inline-markdown.js";

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)[^`]*$/;
const HEADING = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/;
const BULLET = /^(\s*)[-*+]\s+(.*)$/;
const QUOTE = /^ {0,3}> ?(.*)$/;

function renderLine(line: string): string {
  const heading = HEADING.exec(line);
  if (heading) return `<b>${renderInline(heading[1]!)}</b>`;
  const bullet = BULLET.exec(line);
  if (bullet) return `${bullet[1]}• ${renderInline(bullet[2]!)}`;
  return renderInline(line);
}

/** A fenced block from `start`: its HTML and the index of the first line after it (an unclosed fence runs to the end). */
function fencedBlock(lines: string[], start: number): { html: string; next: number } {
  const [, marker, lang] = FENCE.exec(lines[start]!)!;
  let end = start + 1;
  const closes = (line: string) =>
    line.trim().startsWith(marker![0]!.repeat(marker!.length)) && /^[`~]+$/.test(line.trim());
  while (end < lines.length && !closes(lines[end]!)) end++;
  const code = escapeHtml(lines.slice(start + 1, end).join("\n"));
  // An empty block would be an empty entity, which Telegram refuses: keep the fence as text.
  if (!code) return { html: escapeHtml(lines.slice(start, Math.min(end + 1, lines.length)).join("\n")), next: end + 1 };
  const html = lang ? `<pre><code class="language-${escapeHtml(lang)}">${code}</code></pre>` : `<pre>${code}</pre>`;
  return { html, next: end + 1 };
}

/**
 * Markdown as the agents write it to Telegram HTML (`parse_mode: "HTML"`): fenced code as
 * `<pre>`, headings as bold lines, `>` quotes as `<blockquote>`, list bullets as `•`, and the inline
 * syntax of {@link renderInline}. The result is always balanced HTML, converted chunk by chunk after
 * the delivery gate has split the Markdown, so no tag is ever cut; its visible text is never
 * longer than the input, so a chunk within the limit stays within it.
 */
export function markdownToTelegramHtml(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    const line = lines[i]!;
    if (FENCE.test(line)) {
      const block = fencedBlock(lines, i);
      out.push(block.html);
      i = block.next;
      continue;
    }
    if (QUOTE.test(line)) {
      const quoted: string[] = [];
      for (let m = QUOTE.exec(lines[i] ?? ""); m && i < lines.length; m = QUOTE.exec(lines[++i] ?? ""))
        quoted.push(renderLine(m[1]!));
      const body = quoted.join("\n");
      out.push(body.trim() ? `<blockquote>${body}</blockquote>` : body);
      continue;
    }
    out.push(renderLine(line));
    i++;
  }
  return out.join("\n");
}
