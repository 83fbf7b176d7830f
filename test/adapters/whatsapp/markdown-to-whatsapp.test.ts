import { describe, expect, it } from "vitest";
import { markdownToWhatsApp } from "../../../adapters/whatsapp/index.js";

describe("markdownToWhatsApp", () => {
  it.each([
    ["**bold** and __bold__", "*bold* and *bold*"],
    ["*italic* and _italic_", "_italic_ and _italic_"],
    ["~~gone~~", "~gone~"],
    ["## Plan", "*Plan*"],
    ["see [the docs](https://example.com/docs)", "see the docs (https://example.com/docs)"],
    ["* one\n* two", "- one\n- two"],
    ["`**not bold**` stays code", "`**not bold**` stays code"],
    ["a_snake_case name, 2*3*4 and 1 < 2", "a_snake_case name, 2*3*4 and 1 < 2"],
  ])("turns %j into %j", (markdown, whatsapp) => {
    expect(markdownToWhatsApp(markdown)).toBe(whatsapp);
  });

  it("keeps a fenced block as a monospace block without its language and without touching its content", () => {
    expect(markdownToWhatsApp("Run:\n```sh\nnpm start **now**\n```\ndone")).toBe(
      "Run:\n```\nnpm start **now**\n```\ndone",
    );
  });

  it("turns a table into one bullet per row, naming each column", () => {
    const table = "| Name | Role |\n|------|:----:|\n| Ada | **owner** |\n| Grace | guest |";
    expect(markdownToWhatsApp(table)).toBe("• Name: Ada, Role: *owner*\n• Name: Grace, Role: guest");
  });
});
