// The inbox's forwarding seam (src/inbound/inbox-forward.ts) through the real inbound pipeline and
// `chat.send`: a message routed to a session whose partition this gateway does not hold is
// forwarded (routed, without `raw`, under its dedupe key and run id), answered like a stored entry,
// and nothing runs here (the runtime and the sessions are never touched); a forward that could not
// be stored is an `InboxWriteError`, so the platform is not told it arrived.
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { chatSend } from "../../src/gateway/methods/chat-methods.js";
import { createGatewayMetrics } from "../../src/gateway/metrics/gateway-metrics.js";
import { observePipeline } from "../../src/gateway/metrics/observe-pipeline.js";
import { createInboundPipeline } from "../../src/inbound/handle-inbound.js";
import type { ForwardClaim, ForwardedEntry } from "../../src/inbound/inbox-forward.js";
import { InboxWriteError, createInbox } from "../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import { recordingDeliver } from "../fakes/recording-deliver.js";
import { onMemoryState } from "../support/memory-state.js";

/** What must not be reached on a gateway that forwards: any use throws. */
const untouchable = (name: string) =>
  new Proxy(
    {},
    {
      get: (_, key) => {
        throw new Error(`${name}.${String(key)} used by a forwarded message`);
      },
    },
  ) as never;

/** A pipeline whose inbox holds no session and forwards each entry (a repeat of a key: `repeat`), or fails to when `failing`. */
async function forwardingPipeline(failing = false) {
  const { config } = parseConfig({ channels: { telegram: { allowFrom: ["42"] } } });
  const logger = createMemoryLogger();
  const forwarded: ForwardedEntry[] = [];
  const forward = async (entry: ForwardedEntry): Promise<ForwardClaim> => {
    if (failing) throw new Error("database away");
    const first = forwarded.find((e) => e.dedupeKey === entry.dedupeKey);
    if (!first) forwarded.push(entry);
    const sessionKey = entry.sessionKey ?? entry.session ?? "";
    return { status: "forwarded", runId: (first ?? entry).runId, sessionKey, repeat: first !== undefined };
  };
  const inbox = await createInbox({
    ...onMemoryState({ path: "inbox.json", logger }, `forward-${Math.random()}`),
    holds: () => false,
    forward,
  });
  const { deliver } = recordingDeliver();
  const pipeline = createInboundPipeline({
    config,
    sessions: untouchable("sessions"),
    runtime: untouchable("runtime"),
    inbox,
    deliver,
    logger,
  });
  return { pipeline, inbox, forwarded };
}

const dm = (text: string, messageId: string) => ({
  channel: "telegram",
  chat: { type: "direct", id: "42" },
  sender: { id: "42" },
  messageId,
  text,
  raw: { update_id: 1 },
});

describe("the inbox's forwarding seam", () => {
  it("forwards a platform message routed to a session held elsewhere: answered forwarded with its run id, a repeat a pending duplicate, nothing run here", async () => {
    const { pipeline, inbox, forwarded } = await forwardingPipeline();
    const result = await pipeline.handleInbound(dm("hello", "1"), { runId: "run-1" });
    expect(result).toEqual({ status: "forwarded", sessionKey: "agent:main:main", runId: "run-1" });
    expect(forwarded).toEqual([
      {
        dedupeKey: "telegram:default:42:1",
        runId: "run-1",
        session: "agent:main:main",
        message: expect.not.objectContaining({ raw: expect.anything() }),
        // Decided here, where it was received (DM pairing in many mode): the holder trusts it.
        access: expect.objectContaining({ allowed: true }),
      },
    ]);
    expect(forwarded[0]?.message).toMatchObject({ text: "hello", messageId: "1" });
    expect(await pipeline.handleInbound(dm("hello", "1"))).toEqual({
      status: "duplicate",
      dedupeKey: "telegram:default:42:1",
      pending: true,
    });
    expect(inbox.pending()).toEqual([]);
  });

  it("counts a forwarded message under the inbound outcome `forwarded`", async () => {
    const { pipeline } = await forwardingPipeline();
    const metrics = createGatewayMetrics();
    await observePipeline(pipeline, metrics, () => "main").handleInbound(dm("hello", "3"));
    expect(await metrics.scrape()).toContain(
      'switchboard_inbound_messages_total{channel="telegram",account="default",outcome="forwarded"} 1',
    );
  });

  it("answers chat.send on a session held elsewhere `started` with its run id", async () => {
    const { pipeline, forwarded } = await forwardingPipeline();
    const core = {
      pipeline,
      parseKey: (raw: string) => ({ parsed: { key: raw } }),
      clientChannel: "webchat",
      now: () => 1,
    } as never;
    const params = { sessionKey: "agent:main:webchat:dm:7", message: "hi", idempotencyKey: "k-1" };
    expect(await chatSend.handle(core, params, { client: "c" } as never)).toEqual({
      runId: "k-1",
      sessionKey: "agent:main:webchat:dm:7",
      status: "started",
    });
    expect(forwarded.map((e) => [e.dedupeKey, e.sessionKey])).toEqual([
      ["webchat:default:agent:main:webchat:dm:7:k-1", "agent:main:webchat:dm:7"],
    ]);
  });

  it("rejects with an InboxWriteError when the forward could not be stored, and stores nothing here", async () => {
    const { pipeline, inbox } = await forwardingPipeline(true);
    await expect(pipeline.accept(dm("hello", "2"))).rejects.toBeInstanceOf(InboxWriteError);
    expect(inbox.pending()).toEqual([]);
  });
});
