import { describe, expect, it } from "vitest";
import { storedRunId, uuidV5 } from "../../src/agents/uuid-v5.js";

describe("stored run ids (a hook's here)", () => {
  it("computes RFC 9562 UUIDv5 (the RFC's DNS example)", () => {
    expect(uuidV5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com")).toBe(
      "2ed6657d-e927-568b-95e1-2665a8aea6a2",
    );
  });

  it("derives one run id per schema and dedupe key: the same on every gateway, another for another key or schema", () => {
    const id = storedRunId("hook", "switchboard", "hook:deploy-7");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(storedRunId("hook", "switchboard", "hook:deploy-7")).toBe(id);
    expect(
      new Set([id, storedRunId("hook", "switchboard", "hook:deploy-8"), storedRunId("hook", "other", "hook:deploy-7")])
        .size,
    ).toBe(3);
  });
});
