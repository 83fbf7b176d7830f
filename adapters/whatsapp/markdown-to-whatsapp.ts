// WhatsApp renders its own markup: *bold*, _italic_, ~strike~, `code` and ```monospace blocks```.
const FENCE = /^\s*```/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const TABLE_RULE = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const BOLD_OPEN = "\u0001";
const BOLD_CLOSE = "\u0002";
const CODE = "\u0003";

function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((cell) => cell.trim());
}

/** A markdown table as one bullet per row: `• Name: Ada, Role: owner`. */
function tableToBullets(rows: string[]): string[] {
  const [header, , ...body] = rows;
  const names = cells(header!);
  return body.map((row) => {
    const values = cells(row);
    return `• ${values.map((value, i) => (names[i] ? `${names[i]}: ${value}` : value)).join(", ")}`;
  });
}

function inline(line: string): string {
  const codes: string[] = [];
  let text = line.replace(/`[^`\n]+`/g, (span) => {
    codes.push(span);
    return `${CODE}${codes.length - 1}${CODE}`;
  });
  text = text
    .replace(/^(\s*)#{1,6}\s+(.+?)\s*#*\s*$/, `$1${BOLD_OPEN}$2${BOLD_CLOSE}`)
    .replace(/^(\s*)[*+]\s+/, "$1- ")
    .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, `${BOLD_OPEN}$1${BOLD_CLOSE}`)
    .replace(/(^|[^\w_])__(?=\S)(.+?)(?<=\S)__(?![\w_])/g, `$1${BOLD_OPEN}$2${BOLD_CLOSE}`)
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])/g, "$1_$2_")
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "~$1~")
    .replace(/!?\[([^\]\n]+)\]\((\S+?)\)/g, (_m, label: string, url: string) =>
      label === url ? url : `${label} (${url})`,
    );
  return text
    .replaceAll(BOLD_OPEN, "*")
    .replaceAll(BOLD_CLOSE, "*")
    .replace(new RegExp(`${CODE}(\\d+)${CODE}`, "g"), (_m, i: string) => codes[Number(i)]!);
}

/**
 * Markdown (as models write it) to WhatsApp's own formatting: `**bold**` and headings become
 * `*bold*`, `*italic*` becomes `_italic_`, `~~strike~~` becomes `~strike~`, links show their URL,
 * tables become one bullet per row, and fenced code stays a monospace block (without its language).
 * Text without markdown is left exactly as written.
 */
export function markdownToWhatsApp(markdown: string): string {
  const lines = markdown.split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (FENCE.test(line)) {
      out.push("```");
      let j = i + 1;
      while (j < lines.length && !FENCE.test(lines[j]!)) out.push(lines[j++]!);
      out.push("```");
      i = j;
      continue;
    }
    if (TABLE_ROW.test(line) && lines[i + 1] !== undefined && TABLE_RULE.test(lines[i + 1]!)) {
      const rows = [line, lines[i + 1]!];
      let j = i + 2;
      while (j < lines.length && TABLE_ROW.test(lines[j]!)) rows.push(lines[j++]!);
      out.push(...tableToBullets(rows).map(inline));
      i = j - 1;
      continue;
    }
    out.push(inline(line));
  }
  return out.join("\n");
}
