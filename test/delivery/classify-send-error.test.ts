import { describe, expect, it } from "vitest";
import { DeliveryError } from "../../src/delivery/channel-adapter.js";
import { classifySendError } from "../../src/delivery/classify-send-error.js";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("classifySendError", () => {
  it("takes retryable, reason and retryAfterMs from a DeliveryError", () => {
    const err = new DeliveryError("Too Many Requests: retry after 3", {
      retryable: true,
      reason: "rate_limited",
      retryAfterMs: 3000,
    });
    expect(classifySendError(err)).toEqual({
      reason: "rate_limited",
      message: "Too Many Requests: retry after 3",
      retryable: true,
      retryAfterMs: 3000,
    });
    expect(classifySendError(new DeliveryError("blocked", { retryable: false, reason: "blocked" })).retryable).toBe(
      false,
    );
  });

  it.each([
    ["a socket reset", withCode("socket hang up", "ECONNRESET")],
    ["a DNS failure", withCode("getaddrinfo EAI_AGAIN api.telegram.org", "EAI_AGAIN")],
    [
      "fetch failed with a socket cause",
      new TypeError("fetch failed", { cause: withCode("connect", "UND_ERR_CONNECT_TIMEOUT") }),
    ],
    ["a timeout", Object.assign(new Error("The operation timed out"), { name: "TimeoutError" })],
  ])("retries %s", (_, err) => {
    expect(classifySendError(err)).toMatchObject({ reason: "network", retryable: true });
  });

  it("fails any other error at once", () => {
    expect(classifySendError(new TypeError("x is not a function"))).toEqual({
      reason: "send_error",
      message: "x is not a function",
      retryable: false,
    });
    expect(classifySendError("plain string")).toEqual({
      reason: "send_error",
      message: "plain string",
      retryable: false,
    });
  });
});
