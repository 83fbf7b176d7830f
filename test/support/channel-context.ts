// The start context the gateway hands an adapter, for tests that start an adapter on their own: the
// channel state on an in-memory state port, one per home, so an adapter restarted on the same home
// (a "restart") finds what it stored.
import { openChannelStates } from "../../src/state/channel-state.js";
import { type MemoryStateData, openMemoryState } from "../../src/state/memory-state.js";
import type { AdapterStartContext, InboundMessage } from "../../src/index.js";

const homes = new Map<string, MemoryStateData>();

/** The start context of channel `channelId` on the memory state of `home` (a fresh one when not given). */
export async function testStartContext(channelId: string, home?: string): Promise<AdapterStartContext> {
  const data = (home && homes.get(home)) || new Map();
  if (home) homes.set(home, data);
  const states = await openChannelStates(openMemoryState({ data }), { file: "channels.json" });
  return { state: states.forChannel(channelId) };
}

/** The messages an adapter hands over, and the sink it is started with that keeps them (after the test's `beforeReceive`). */
export function receivedMessages(beforeReceive?: (message: InboundMessage) => Promise<void>) {
  const received: InboundMessage[] = [];
  const sink = async (message: InboundMessage): Promise<void> => {
    await beforeReceive?.(message);
    received.push(message);
  };
  return { received, sink };
}
