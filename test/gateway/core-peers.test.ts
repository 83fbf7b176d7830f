// The peer call a core's adapters reach the global holder with (src/gateway/core-peers.ts): the
// holder is read once and kept; a call it ran nothing for reads it again and goes there once more.
import { describe, expect, it } from "vitest";
import { type PeerCall, PeerRefusedError, type PeerTarget } from "../../src/cluster/peer-call.js";
import { SwitchboardError } from "../../src/errors.js";
import { corePeers } from "../../src/gateway/core-peers.js";
import { createPeerHandlers } from "../../src/gateway/peer-handlers.js";

const A: PeerTarget = { nodeId: "gw-a", address: "127.0.0.1:1001" };
const B: PeerTarget = { nodeId: "gw-b", address: "127.0.0.1:1002" };

/** Peers whose holder reads answer `holders` in turn (the last one again); the calls made, by node. */
function peersWith(holders: Array<PeerTarget | undefined>, answer: (target: PeerTarget) => unknown) {
  let reads = 0;
  const calls: string[] = [];
  const call: PeerCall = async (target) => {
    calls.push(target.nodeId);
    return answer(target);
  };
  const holder = async () => holders[Math.min(reads++, holders.length - 1)];
  const peers = corePeers({ holder, call, handlers: createPeerHandlers() });
  return { peers, calls, reads: () => reads };
}

describe("corePeers", () => {
  it("reads the holder once for many calls while it answers", async () => {
    const { peers, calls, reads } = peersWith([A], () => "sent");
    for (let i = 0; i < 5; i++) expect(await peers.callHolder("whatsapp.send", { i })).toBe("sent");
    expect(calls).toEqual(["gw-a", "gw-a", "gw-a", "gw-a", "gw-a"]);
    expect(reads()).toBe(1);
  });

  it("reads the holder again when the one it kept ran nothing, and sends there once more", async () => {
    const { peers, calls, reads } = peersWith([A, B], (target) => {
      if (target.nodeId === "gw-a") throw new PeerRefusedError("UNAVAILABLE", "gw-a: not reachable");
      return "sent by b";
    });
    expect(await peers.callHolder("whatsapp.send", {})).toBe("sent by b");
    expect(await peers.callHolder("whatsapp.send", {})).toBe("sent by b");
    expect(calls).toEqual(["gw-a", "gw-b", "gw-b"]);
    expect(reads()).toBe(2);
  });

  it("never sends twice a call that may have run (not a refusal), and says UNAVAILABLE while no holder is known", async () => {
    const { peers, calls } = peersWith([A], () => {
      throw new SwitchboardError("UNAVAILABLE", "no answer in 30000 ms; it may have taken effect");
    });
    await expect(peers.callHolder("whatsapp.send", {})).rejects.toThrow(/may have taken effect/);
    expect(calls).toEqual(["gw-a"]);
    const none = peersWith([undefined], () => "never");
    await expect(none.peers.callHolder("whatsapp.send", {})).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(none.calls).toEqual([]);
  });

  it("runs the call on this gateway's own handler, with no HTTP call, when it holds the writer lease (its global core beside the partition core)", async () => {
    const handlers = createPeerHandlers();
    const calls: string[] = [];
    let global = false;
    const peers = corePeers({
      holder: async () => undefined,
      call: async (target) => calls.push(target.nodeId),
      handlers,
      self: () => global,
    });
    handlers.set("whatsapp.send", async (params) => ({ sentHere: params }));
    await expect(peers.callHolder("whatsapp.send", { n: 1 })).rejects.toMatchObject({ code: "UNAVAILABLE" });
    global = true;
    expect(await peers.callHolder("whatsapp.send", { n: 2 })).toEqual({ sentHere: { n: 2 } });
    expect(calls).toEqual([]);
  });
});
