// DM pairing with `cluster.owners: "many"` (docs/scale-out.md "DM pairing in many mode"): the
// gateway that receives a message (the global holder: it holds every channel account and the
// pairing rows, rows of no session) decides its sender's access before it forwards the message to
// its session's owner, and gives a stranger their pairing code there. The owner trusts the decision
// the forward carries: its own image of the pairing rows was loaded when it opened.
import type { InboundMessage } from "../routing/inbound-message.js";
import type { AccessDecision } from "./access.js";
import { accessOf } from "./inbound-handle.js";
import type { Pipeline } from "./inbound-wiring.js";
import { InboxWriteError } from "./inbox-write-error.js";

/**
 * The access decision to forward with `message` when another gateway holds `sessionKey`'s partition
 * (undefined: it is handled here, and decided when handled). A stranger's pairing code is asked for
 * and handed on first, so the decision forwarded no longer asks for one. A failure is an
 * `InboxWriteError`: the message is not acknowledged, and its redelivery finds the code (one per sender).
 */
export async function accessBeforeForward(
  p: Pipeline,
  message: InboundMessage,
  sessionKey: string | undefined,
): Promise<AccessDecision | undefined> {
  if (sessionKey === undefined || !p.deps.inbox.heldElsewhere(sessionKey)) return undefined;
  const access = accessOf(p, message);
  if (!access.pairing) return access;
  const { pairing: _asked, ...decided } = access;
  try {
    await p.deps.pairing?.onStranger(message, p.keys.parse(sessionKey).parsed);
  } catch (err) {
    throw err instanceof InboxWriteError ? err : new InboxWriteError(err);
  }
  return decided;
}
