// A channel adapter that records what it is asked to send and fails on request, for tests of the
// delivery gate and of anything that delivers through it.
import type {
  ChannelAdapter,
  CommandInteraction,
  InboundSink,
  OutboundMessage,
} from "../../src/delivery/channel-adapter.js";
import { DeliveryError } from "../../src/delivery/channel-adapter.js";
import { opaqueTargetCodec } from "../../src/delivery/delivery-target.js";
import type { InboundMessage } from "../../src/routing/inbound-message.js";
import type { DeliveryContext } from "../../src/sessions/session-entry.js";

/** How the next sends fail: a retryable or fatal DeliveryError, a 429 with retryAfterMs, or any error. */
type FakeFailure = "retryable" | "fatal" | { retryAfterMs: number } | Error;

/** One message the fake platform accepted. */
interface FakeSend {
  target: DeliveryContext;
  message: OutboundMessage;
  messageId: string;
}

/** A {@link ChannelAdapter} with its record of sends and knobs to make sends fail or wait. */
export interface FakeChannelAdapter extends ChannelAdapter {
  /** messages accepted, in order */
  readonly sent: FakeSend[];
  /** every call to `send`, accepted or not */
  readonly calls: Array<{ target: DeliveryContext; message: OutboundMessage }>;
  /** texts accepted, in order */
  texts(): string[];
  /** makes the next `count` sends throw (default "retryable"), after `after` more sends succeed */
  failNext(count: number, failure?: FakeFailure, options?: { after?: number }): void;
  /** holds every send from now on until the returned release function is called */
  hold(): () => void;
  /** hands an inbound message (and a native command's interaction) to the sink given to `start` */
  receive(message: InboundMessage, interaction?: CommandInteraction): Promise<void>;
}

function errorFor(failure: FakeFailure): Error {
  if (failure instanceof Error) return failure;
  if (failure === "retryable") return new DeliveryError("fake: network hiccup", { retryable: true, reason: "network" });
  if (failure === "fatal")
    return new DeliveryError("fake: chat not found", { retryable: false, reason: "chat_not_found" });
  return new DeliveryError("fake: too many requests", {
    retryable: true,
    reason: "rate_limited",
    retryAfterMs: failure.retryAfterMs,
  });
}

/** Creates a fake adapter for channel `id` (default "fake") that accepts `maxTextLength` (default 4000). */
export function createFakeChannelAdapter(
  options: {
    id?: string;
    maxTextLength?: number;
    maxLinesPerMessage?: number;
    deduplicatesSends?: boolean;
    nativeCommands?: boolean;
  } = {},
): FakeChannelAdapter {
  const sent: FakeSend[] = [];
  const calls: FakeChannelAdapter["calls"] = [];
  // What the coming sends do, oldest first: undefined succeeds, anything else fails.
  const outcomes: Array<FakeFailure | undefined> = [];
  let gate: Promise<void> | undefined;
  let sink: InboundSink | undefined;
  const id = options.id ?? "fake";
  const maxTextLength = options.maxTextLength ?? 4000;
  return {
    id,
    capabilities: {
      maxTextLength,
      ...(options.maxLinesPerMessage !== undefined && { maxLinesPerMessage: options.maxLinesPerMessage }),
      typing: true,
      nativeCommands: options.nativeCommands ?? false,
      deduplicatesSends: options.deduplicatesSends ?? false,
      gatewayClients: false,
    },
    targets: opaqueTargetCodec(id),
    sent,
    calls,
    async start(next) {
      sink = next;
    },
    async stop() {
      sink = undefined;
    },
    async send(target, message) {
      calls.push({ target, message });
      if (gate) await gate;
      const failure = outcomes.shift();
      if (failure !== undefined) throw errorFor(failure);
      if (message.text.length > maxTextLength) {
        throw new DeliveryError(`fake: text of ${message.text.length} exceeds ${maxTextLength}`, {
          retryable: false,
          reason: "too_long",
        });
      }
      const messageId = `${id}-${sent.length + 1}`;
      sent.push({ target, message, messageId });
      return { messageIds: [messageId] };
    },
    texts: () => sent.map((s) => s.message.text),
    failNext(count, failure = "retryable", { after = 0 } = {}) {
      for (let i = 0; i < after; i++) outcomes.push(undefined);
      for (let i = 0; i < count; i++) outcomes.push(failure);
    },
    hold() {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
    async receive(message, interaction) {
      if (!sink) throw new Error(`fake adapter "${id}" is not started`);
      await sink(message, interaction);
    },
  };
}

/** A native command's interaction that records what the core did with it. */
export interface RecordingInteraction extends CommandInteraction {
  /** every call, in order: `defer`, then the answer */
  readonly calls: Array<{ call: "defer" } | { call: "reply"; text: string; ephemeral: boolean }>;
  /** settles with the first answer */
  readonly replied: Promise<{ text: string; ephemeral: boolean }>;
}

/** An interaction that records its calls; `failReply` makes `reply` throw (after recording it). */
export function createRecordingInteraction(options: { failReply?: Error } = {}): RecordingInteraction {
  const calls: RecordingInteraction["calls"] = [];
  let settle!: (answer: { text: string; ephemeral: boolean }) => void;
  const replied = new Promise<{ text: string; ephemeral: boolean }>((resolve) => (settle = resolve));
  return {
    calls,
    replied,
    async defer() {
      calls.push({ call: "defer" });
    },
    async reply(text, replyOptions = {}) {
      const answer = { text, ephemeral: replyOptions.ephemeral === true };
      calls.push({ call: "reply", ...answer });
      settle(answer);
      if (options.failReply) throw options.failReply;
    },
  };
}
