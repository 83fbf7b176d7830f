import { describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, decideReconnect } from "../../../adapters/whatsapp/index.js";

describe("decideReconnect", () => {
  it("stops on loggedOut (401) and tells the owner the command that links the device again", () => {
    expect(decideReconnect(401, 0, "default")).toEqual({
      action: "stop",
      reason: "logged_out",
      message: expect.stringContaining("switchboard channels login whatsapp"),
    });
    expect(decideReconnect(401, 3, "work")).toMatchObject({ message: expect.stringContaining("--account work") });
  });

  it("reconnects at once when WhatsApp asks for a restart right after linking (515)", () => {
    expect(decideReconnect(515, 0, "default")).toEqual({ action: "reconnect", delayMs: 0 });
  });

  it.each([428, 408, 440, 500, 503, undefined])("reconnects after %s with a delay that grows to the cap", (status) => {
    const delays = [0, 1, 2, 3, 10, 50].map((attempt) => {
      const decision = decideReconnect(status, attempt, "default", DEFAULT_BACKOFF, () => 0.5);
      expect(decision.action).toBe("reconnect");
      return (decision as { delayMs: number }).delayMs;
    });
    expect(delays).toEqual([2_000, 3_600, 6_480, 11_664, 30_000, 30_000]);
  });

  it("spreads each delay by at most the jitter either way", () => {
    const low = decideReconnect(428, 0, "default", DEFAULT_BACKOFF, () => 0);
    const high = decideReconnect(428, 0, "default", DEFAULT_BACKOFF, () => 0.999_999);
    expect(low).toEqual({ action: "reconnect", delayMs: 1_500 });
    expect((high as { delayMs: number }).delayMs).toBe(2_500);
  });
});
