import { defineCommand } from "../command-definition.js";
import { STRINGS } from "../command-strings.js";
import type { PairingScope } from "../pairing-control.js";
import { pairingListText, pairingResultText } from "../pairing-text.js";

/** `/pair [list|approve <code>|deny <code>]`: pairing codes of this chat's channel account (owners only). */
export const pairCommand = defineCommand({
  name: "pair",
  usage: "/pair [list|approve <code>|deny <code>]",
  summary: "Lists the pairing codes unknown senders were given on this account; approves or denies one.",
  access: "owner",
  async run(command, { context, deps, now }) {
    const pairing = deps.pairing;
    if (!pairing) return { reply: STRINGS.pairUnavailable };
    const { message } = context;
    // The gateway's own clients (web and terminal chat) act as the owner of every account.
    const scope: PairingScope | undefined = context.sender.gatewayClient
      ? undefined
      : { channel: message.channel, accountId: message.accountId };
    if (command.action === "list") return { reply: pairingListText(pairing.list(scope), now()) };
    const by = `${message.channel}:${message.sender.id}`;
    const result =
      command.action === "approve"
        ? await pairing.approve(command.code, by, scope)
        : await pairing.deny(command.code, by, scope);
    return { reply: pairingResultText(command.code, command.action === "approve" ? "approved" : "denied", result) };
  },
});
