// DM pairing with `cluster.owners: "many"` (docs/scale-out.md "DM pairing in many mode"): the
// gateway that receives a message (the global holder: it holds every channel account and the
// pairing rows, rows of no session) decides its sender's access before it forwards the message to
// its session's owner, gives a stranger their pairing code there, and runs `/pair` there. The owner
// trusts what the forward carries: its own image of the pairing rows was loaded when it opened.
import type { AnsweredOutcome, CommandOutcome } from "../commands/command-context.js";
import { commandNameOf } from "../commands/command-grammar.js";
import { readInvocation } from "../commands/parse-command.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { AccessDecision } from "./access.js";
import { accessOf, commandContext } from "./inbound-handle.js";
import type { Pipeline } from "./inbound-wiring.js";
import { InboxWriteError } from "./inbox-write-error.js";

/** What a forwarded message carries: the receiver's access decision, and the outcome of a command it ran. */
export interface Decided {
  access: AccessDecision;
  outcome?: AnsweredOutcome;
}

/**
 * Commands that act on rows of no session (the pairing table, the cron jobs) and on what only the
 * global holder runs (the scheduler): run where the message is received.
 */
const RUN_WHERE_RECEIVED = new Set(["pair", "cron"]);

/** True when `message` is a command run by the gateway that receives it. */
function runsHere(message: InboundMessage): boolean {
  const name = message.command?.name ?? readInvocation(message.text)?.name;
  return name !== undefined && RUN_WHERE_RECEIVED.has(commandNameOf(name) ?? "");
}

/** The part of a command's outcome that travels (a `/pair` outcome has no reset). */
const answered = (outcome: CommandOutcome): AnsweredOutcome => ({
  ...(outcome.reply !== undefined && { reply: outcome.reply }),
  ...(outcome.refused && { refused: true as const }),
  ...(outcome.ephemeral && { ephemeral: true as const }),
});

/** A stranger's code, or `/pair`'s outcome, made here; a failure is an `InboxWriteError` (not acknowledged, delivered again). */
async function actHere(p: Pipeline, message: InboundMessage, sessionKey: string, access: AccessDecision) {
  const keyed = p.keys.parse(sessionKey);
  try {
    if (access.pairing) return void (await p.deps.pairing?.onStranger(message, keyed.parsed));
    if (!access.commands || !runsHere(message)) return undefined;
    const outcome = await p.commands.dispatch(commandContext({ message, ...keyed, access }));
    return outcome ? answered(outcome) : undefined;
  } catch (err) {
    throw err instanceof InboxWriteError ? err : new InboxWriteError(err);
  }
}

/**
 * What to forward with `message` when another gateway holds `sessionKey`'s partition (undefined: it
 * is handled here, and decided when handled). A stranger's pairing code is asked for and handed on
 * first, so the decision forwarded no longer asks for one; its redelivery after a failure finds
 * the code made the first time (one per sender).
 */
export function decideBeforeForward(
  p: Pipeline,
  message: InboundMessage,
  sessionKey: string | undefined,
): Promise<Decided> | undefined {
  // Not awaited when there is nothing to decide: the entry is then claimed in the caller's own step,
  // as a hand-off pass needs (its rows stored in the commit that deletes them: "stores at once").
  if (sessionKey === undefined || !p.deps.inbox.heldElsewhere(sessionKey)) return undefined;
  return decided(p, message, sessionKey);
}

/** The receiver's decision for a message another gateway will handle, and what it did here (a code, a `/pair`). */
async function decided(p: Pipeline, message: InboundMessage, sessionKey: string): Promise<Decided> {
  const decision = accessOf(p, message);
  const outcome = await actHere(p, message, sessionKey, decision);
  const { pairing: _asked, ...access } = decision;
  return { access, ...(outcome && { outcome }) };
}
