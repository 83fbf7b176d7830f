import { generateText } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { routeSdkWarnings } from "../../../src/agents/models/route-sdk-warnings.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { createScriptedModel } from "../../fakes/scripted-model.js";

afterEach(() => {
  globalThis.AI_SDK_LOG_WARNINGS = undefined;
});

describe("routeSdkWarnings", () => {
  it("logs model warnings through the logger", async () => {
    const logger = createMemoryLogger();
    routeSdkWarnings(logger);
    const model = createScriptedModel([{ text: "ok" }]);
    const original = model.doGenerate;
    model.doGenerate = async (options) => ({
      ...(await original(options)),
      warnings: [{ type: "other", message: "seed ignored" }],
    });
    await generateText({ model, prompt: "hi" });
    expect(logger.records).toEqual([
      {
        level: "warn",
        fields: { provider: "scripted", model: "script", warnings: [{ type: "other", message: "seed ignored" }] },
        message: "model warnings",
      },
    ]);
  });
});
