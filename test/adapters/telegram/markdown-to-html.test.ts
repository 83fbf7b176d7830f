import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../../adapters/telegram/index.js";
import { parseTelegramHtml } from "../../fakes/telegram-html.js";

describe("markdownToTelegramHtml", () => {
  it.each([
    ["plain text", "hello", "hello"],
    ["escapes &, < and >", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"],
    [
      "a line without inline syntax, escaped only",
      'He said "hi" (twice) - ok! #1 + 2.',
      "He said &quot;hi&quot; (twice) - ok! #1 + 2.",
    ],
    ["leaves HTML-looking text inert", "<b>x</b>", "&lt;b&gt;x&lt;/b&gt;"],
    ["bold", "**bold** and __bold__", "<b>bold</b> and <b>bold</b>"],
    ["italic", "*it* and _it_", "<i>it</i> and <i>it</i>"],
    ["strikethrough", "~~gone~~", "<s>gone</s>"],
    ["nested emphasis", "**bold _and italic_**", "<b>bold <i>and italic</i></b>"],
    ["snake_case stays text", "call my_func_name now", "call my_func_name now"],
    ["unmatched delimiters stay text", "2 * 3 = 6 and **open", "2 * 3 = 6 and **open"],
    ["crossed delimiters nest or stay text", "**a *b** c*", "<b>a *b</b> c*"],
    ["inline code is escaped, not formatted", "use `a<b> **x**` here", "use <code>a&lt;b&gt; **x**</code> here"],
    ["double-backtick code holds a backtick", "``a ` b``", "<code>a ` b</code>"],
    ["unclosed backtick stays text", "it`s fine", "it`s fine"],
    [
      "links with a safe scheme",
      "[docs](https://example.com/a?b=1&c=2)",
      '<a href="https://example.com/a?b=1&amp;c=2">docs</a>',
    ],
    ["links with an unsafe scheme stay text", "[x](javascript:alert(1))", "[x](javascript:alert(1))"],
    ["backslash escapes", "\\*not italic\\*", "*not italic*"],
    ["headings become bold lines", "# Title\n## Sub *x*", "<b>Title</b>\n<b>Sub <i>x</i></b>"],
    ["bullets", "- one\n* two\n  + three", "• one\n• two\n  • three"],
    ["quotes", "> said\n> twice\nafter", "<blockquote>said\ntwice</blockquote>\nafter"],
    [
      "fenced code with a language",
      "```ts\nconst a = 1 < 2;\n```",
      '<pre><code class="language-ts">const a = 1 &lt; 2;</code></pre>',
    ],
    ["fenced code keeps markdown as text", "```\n**x** _y_\n```\nafter", "<pre>**x** _y_</pre>\nafter"],
    ["an unclosed fence runs to the end", "```\ncode", "<pre>code</pre>"],
    ["an empty fence stays text", "```\n```", "```\n```"],
  ])("renders %s", (_name, markdown, html) => {
    expect(markdownToTelegramHtml(markdown)).toBe(html);
  });

  it("always produces HTML Telegram parses, never longer in visible text than the Markdown", () => {
    const alphabet = fc.constantFrom(
      "a",
      "b",
      " ",
      "\n",
      "*",
      "_",
      "~",
      "`",
      "[",
      "]",
      "(",
      ")",
      "<",
      ">",
      "&",
      "#",
      "-",
      "\\",
      "https://x.io",
      "```",
      "> ",
    );
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 60 }).map((parts) => parts.join("")),
        (markdown) => {
          const parsed = parseTelegramHtml(markdownToTelegramHtml(markdown));
          expect(parsed).not.toHaveProperty("error");
          expect((parsed as { text: string }).text.length).toBeLessThanOrEqual(markdown.length);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
