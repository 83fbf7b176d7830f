const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

/** Escapes `&`, `<`, `>` and `"` for Telegram HTML (the only named entities Telegram knows). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (ch) => ESCAPES[ch]!);
}

type Delimiter = "**" | "__" | "~~" | "*" | "_";
const TAG: Record<Delimiter, string> = { "**": "b", __: "b", "~~": "s", "*": "i", _: "i" };
const SAFE_URL = /^(?:https?:\/\/|tg:\/\/|mailto:)[^\s"<>]+$/i;
const LINK = /^\[([^\]\n]+)\]\(([^()\s]+)\)/;
const ESCAPABLE = /[\\`*_~[\]()#>!+\-.|{}]/;
/** The characters the inline syntax starts with; a line without any is only escaped. */
const INLINE_SYNTAX = /[\\`[*_~]/;
const isSpace = (ch: string | undefined) => ch === undefined || /\s/.test(ch);
const isWord = (ch: string | undefined) => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);

function delimiterAt(text: string, i: number): Delimiter | undefined {
  const two = text.slice(i, i + 2);
  if (two === "**" || two === "__" || two === "~~") return two;
  const one = text[i];
  return one === "*" || one === "_" ? one : undefined;
}

// CommonMark-like flanking: `_` never opens or closes inside a word (snake_case stays as it is).
function canOpen(text: string, i: number, d: Delimiter): boolean {
  return !isSpace(text[i + d.length]) && !(d[0] === "_" && isWord(text[i - 1]));
}

function canClose(text: string, i: number, d: Delimiter): boolean {
  return !isSpace(text[i - 1]) && !(d[0] === "_" && isWord(text[i + d.length]));
}

/** A code span opening at `i`: a run of n backticks up to the next run of exactly n. */
function codeSpanAt(text: string, i: number): { html: string; end: number } | { literal: string } {
  let n = 0;
  while (text[i + n] === "`") n++;
  const fence = "`".repeat(n);
  for (let j = text.indexOf(fence, i + n); j >= 0; j = text.indexOf(fence, j + 1)) {
    if (text[j - 1] === "`" || text[j + n] === "`") continue;
    let code = text.slice(i + n, j);
    if (code.length > 2 && code.startsWith(" ") && code.endsWith(" ")) code = code.slice(1, -1);
    return code ? { html: `<code>${escapeHtml(code)}</code>`, end: j + n } : { literal: fence };
  }
  return { literal: fence };
}

/**
 * Renders one line of Markdown inline syntax as Telegram HTML: `code`, **bold**, __bold__, *italic*,
 * _italic_, ~~strike~~ and [links](https://...) with safe schemes; everything else is escaped text.
 * Unmatched delimiters stay literal, so the output is always balanced and never longer in visible
 * text than the input.
 */
export function renderInline(text: string): string {
  // Most lines of a reply carry no syntax at all: one escape of the whole line, not one per character.
  if (!INLINE_SYNTAX.test(text)) return escapeHtml(text);
  const out: string[] = [];
  const open: Array<{ delimiter: Delimiter; at: number }> = [];
  let i = 0;
  while (i < text.length) {
    const token = tokenAt(text, i);
    if (token) {
      out.push(token.html);
      i = token.end;
      continue;
    }
    const d = delimiterAt(text, i);
    if (!d) {
      out.push(escapeHtml(text[i]!));
      i++;
      continue;
    }
    const k = open.findLastIndex((o) => o.delimiter === d);
    if (k >= 0 && canClose(text, i, d) && open[k]!.at < out.length - 1) {
      // Openers above the one that closes stay literal text: tags always nest.
      out[open[k]!.at] = `<${TAG[d]}>`;
      out.push(`</${TAG[d]}>`);
      open.length = k;
    } else {
      if (canOpen(text, i, d)) open.push({ delimiter: d, at: out.length });
      out.push(d);
    }
    i += d.length;
  }
  return out.join("");
}

/** What an escape, a code span or a safe link at `i` renders as, and where it ends; undefined for anything else. */
function tokenAt(text: string, i: number): { html: string; end: number } | undefined {
  const ch = text[i]!;
  if (ch === "\\" && ESCAPABLE.test(text[i + 1] ?? "")) return { html: escapeHtml(text[i + 1]!), end: i + 2 };
  if (ch === "`") {
    const span = codeSpanAt(text, i);
    return "html" in span ? span : { html: span.literal, end: i + span.literal.length };
  }
  const link = ch === "[" ? LINK.exec(text.slice(i)) : null;
  if (link && SAFE_URL.test(link[2]!))
    return { html: `<a href="${escapeHtml(link[2]!)}">${escapeHtml(link[1]!)}</a>`, end: i + link[0].length };
  return undefined;
}
