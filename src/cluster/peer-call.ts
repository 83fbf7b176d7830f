// STAND-IN (task `wa`): the peer call of task `writes` (docs/scale-out.md "N owners"), kept minimal
// with the interface of /work/helpers/s11/DESIGN.md; the lead takes `writes`' file at merge.
// One gateway asks another gateway's core to run a named handler: `POST /cluster/call` to the
// member's advertised address, authenticated by the schema's relay secret.
import { SwitchboardError } from "../errors.js";
import type { ErrorCode } from "../errors/error-catalogue.js";
import { RELAY_SECRET_HEADER } from "./relay-secret.js";

/** The route every member serves the peer call on. */
export const PEER_CALL_PATH = "/cluster/call";

/** A member to call: its node id and where peers reach it ("host:port"). */
export interface PeerTarget {
  nodeId: string;
  address: string;
}

/** Rejects with a SwitchboardError: the remote one's code and message, or UNAVAILABLE when the peer could not be reached or answered 503. */
export type PeerCall = (target: PeerTarget, name: string, params: unknown) => Promise<unknown>;

type Answer = { ok: true; result: unknown } | { ok: false; error: { code: ErrorCode; message: string } };

/** The process's one peer call; `timeoutMs` (default 10 s) bounds each call. */
export function createPeerCall(options: { relaySecret: () => Promise<string>; timeoutMs?: number }): PeerCall {
  return async (target, name, params) => {
    let answer: Answer;
    try {
      const response = await fetch(`http://${target.address}${PEER_CALL_PATH}`, {
        method: "POST",
        headers: { "content-type": "application/json", [RELAY_SECRET_HEADER]: await options.relaySecret() },
        body: JSON.stringify({ to: target.nodeId, name, params }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      answer = (await response.json()) as Answer;
    } catch (err) {
      throw new SwitchboardError("UNAVAILABLE", `gateway ${target.nodeId} at ${target.address} could not be reached`, {
        cause: err,
      });
    }
    if (answer.ok) return answer.result;
    throw new SwitchboardError(answer.error.code, answer.error.message);
  };
}
