import { describe, expect, it } from "vitest";
import { effectiveResetTriggers, matchResetTrigger } from "../../src/sessions/reset-triggers.js";

const defaults = effectiveResetTriggers(undefined);

describe("matchResetTrigger", () => {
  it.each([
    ["a bare /new", "/new", { trigger: "/new", remainder: "" }],
    ["keeps the case of the rest", "/NEW KeepThisCase", { trigger: "/new", remainder: "KeepThisCase" }],
    ["trims around the rest", "/reset   summarize this  ", { trigger: "/reset", remainder: "summarize this" }],
    ["/newx is another word", "/newx", null],
    ["the colon form is the same command everywhere: /new: is /new", "/new:", { trigger: "/new", remainder: "" }],
    ["colon form with text", "/new: hello there", { trigger: "/new", remainder: "hello there" }],
    ["no lossy prefix stripping: text before the trigger makes it plain text", "Note: /new please", null],
    [
      "the rest is passed on as written: keeps brackets and line breaks",
      "/new summarize [draft]\nline2",
      { trigger: "/new", remainder: "summarize [draft]\nline2" },
    ],
    ["a trigger mid-sentence is not one", "please /new", null],
    ["/status is not a reset", "/status", null],
  ])("%s", (_name, text, expected) => {
    expect(matchResetTrigger(text, defaults)).toEqual(expected);
  });

  it("the seed keeps /new and /reset, configured triggers are extras: adds configured triggers", () => {
    const triggers = effectiveResetTriggers(["/fresh", "/NEW"]);
    expect(triggers).toEqual(["/new", "/reset", "/fresh"]);
    expect(matchResetTrigger("/fresh start", triggers)).toEqual({ trigger: "/fresh", remainder: "start" });
    expect(matchResetTrigger("/new", triggers)).toEqual({ trigger: "/new", remainder: "" });
    expect(effectiveResetTriggers([])).toEqual(["/new", "/reset"]);
  });

  it("does not take a trigger addressed to a bot by name (adapters turn /new@ThisBot into /new)", () => {
    expect(matchResetTrigger("/new@OtherBot hi", defaults)).toBeNull();
    expect(matchResetTrigger("/new@MyBot", defaults)).toBeNull();
  });
});
