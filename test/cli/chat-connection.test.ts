// keepChatConnected with fake gateway clients and an injected clock: what the terminal chat does
// with a call the gateway never answered, with a wait a reconnect cut off, and when it gives up.
import { describe, expect, it } from "vitest";
import {
  type ChatConnectionDeps,
  GatewayGoneError,
  ReconnectedError,
  keepChatConnected,
} from "../../src/cli/chat-connection.js";
import { type GatewayClient, GatewayClosedError } from "../../src/cli/gateway-client.js";

/** A gateway client whose calls wait until answered, and whose connection the test drops. */
function fakeClient(name: string) {
  const calls: Array<{ method: string; params: unknown; answer: (value: unknown) => void }> = [];
  const rejects = new Set<(error: Error) => void>();
  const closeListeners: Array<() => void> = [];
  let open = true;
  const client: GatewayClient = {
    call: <T>(method: string, params?: unknown) =>
      open
        ? new Promise<T>((resolve, reject) => {
            calls.push({ method, params, answer: resolve as (value: unknown) => void });
            rejects.add(reject);
          })
        : Promise.reject(new GatewayClosedError("not connected to the gateway")),
    onEvent: () => () => undefined,
    onClose: (listener) => void closeListeners.push(listener),
    close: async () => undefined,
  };
  const drop = () => {
    open = false;
    for (const reject of rejects) reject(new GatewayClosedError());
    for (const listener of closeListeners) listener();
  };
  return { name, client, calls, drop };
}

/** Deps whose sleeps advance a fake clock at once; `dials` answers each reconnect in turn. */
function deps(first: GatewayClient, dials: Array<() => Promise<GatewayClient>>, notices: string[]): ChatConnectionDeps {
  let clock = 0;
  return {
    first,
    dial: () => (dials.shift() ?? (() => Promise.reject(new Error("connect ECONNREFUSED"))))(),
    onReconnect: (client) => client.call("subscribe", { sessionKeys: ["agent:main:main"] }),
    notice: (line) => notices.push(line),
    giveUpAfterMs: 10_000,
    url: "ws://127.0.0.1:1",
    sleep: async (ms) => {
      clock += ms;
    },
    now: () => clock,
  };
}

/** Lets the fake's promises settle (no timer: microtasks and one turn of the loop). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("keepChatConnected", () => {
  it("sends a call the dropped connection never answered again on the next one, after subscribing, with the same params", async () => {
    const a = fakeClient("a");
    const b = fakeClient("b");
    const notices: string[] = [];
    const connection = keepChatConnected(deps(a.client, [async () => b.client], notices));
    const params = { sessionKey: "main", message: "hi", idempotencyKey: "k-1" };
    const sent = connection.call<{ status: string }>("chat.send", params);
    await settle();
    expect(a.calls.map((c) => c.method)).toEqual(["chat.send"]);
    a.drop();
    await settle();
    expect(b.calls.map((c) => c.method)).toEqual(["subscribe"]);
    b.calls[0]!.answer({});
    await settle();
    expect(b.calls[1]).toMatchObject({ method: "chat.send", params });
    b.calls[1]!.answer({ status: "started" });
    expect(await sent).toEqual({ status: "started" });
    expect(notices).toEqual([
      "[the gateway at ws://127.0.0.1:1 went away; reconnecting for up to 10 s]",
      "[reconnected to the gateway]",
    ]);
  });

  it("cuts a guarded wait off at a reconnect: what only the old connection would have said is asked again", async () => {
    const a = fakeClient("a");
    const b = fakeClient("b");
    const connection = keepChatConnected(deps(a.client, [async () => b.client], []));
    const waiting = connection.guard(new Promise(() => undefined));
    a.drop();
    await settle();
    b.calls[0]!.answer({});
    await expect(waiting).rejects.toBeInstanceOf(ReconnectedError);
  });

  it("gives up after the bound while idle: its close listeners hear it, and every call after it fails with the reason", async () => {
    const a = fakeClient("a");
    const notices: string[] = [];
    const connection = keepChatConnected(deps(a.client, [], notices));
    let closed = false;
    connection.onClose(() => {
      closed = true;
    });
    const waiting = connection.guard(new Promise(() => undefined));
    a.drop();
    await expect(waiting).rejects.toBeInstanceOf(GatewayGoneError);
    expect(closed).toBe(true);
    expect(connection.gone?.message).toBe(
      "the gateway at ws://127.0.0.1:1 went away and did not come back within 10 s (connect ECONNREFUSED)",
    );
    await expect(connection.call("chat.send", {})).rejects.toBe(connection.gone);
    expect(notices).not.toContain("[reconnected to the gateway]");
  });

  it("keeps trying while the gateway refuses, within the bound", async () => {
    const a = fakeClient("a");
    const b = fakeClient("b");
    const refused = () => Promise.reject(new Error("connect ECONNREFUSED"));
    const connection = keepChatConnected(deps(a.client, [refused, refused, refused, async () => b.client], []));
    a.drop();
    const sent = connection.call("status");
    await expect.poll(() => b.calls.length).toBe(1);
    b.calls[0]!.answer({});
    await expect.poll(() => b.calls.length).toBe(2);
    b.calls[1]!.answer({ ok: true });
    expect(await sent).toEqual({ ok: true });
    expect(connection.gone).toBeUndefined();
  });
});
