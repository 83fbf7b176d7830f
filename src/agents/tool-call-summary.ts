const MAX = 160;

/** The one line `/verbose on` sends for a tool call: `🔧 read {"path":"notes.md"}`, cut at 160 characters. */
export function toolCallSummary(name: string, input: unknown): string {
  const args = input === undefined ? "" : ` ${JSON.stringify(input)}`;
  const line = `🔧 ${name}${args}`;
  return line.length > MAX ? `${line.slice(0, MAX - 1)}…` : line;
}
