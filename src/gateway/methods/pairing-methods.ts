import { z } from "zod";
import type { PairingScope } from "../../commands/pairing-control.js";
import { DEFAULT_ACCOUNT_ID } from "../../routing/normalize.js";
import { defineMethod } from "./method.js";

/** Narrows a call to one channel account; without `channel` it reaches every account. */
const ScopeFields = {
  channel: z.string().min(1).optional(),
  /** default: "default" when `channel` is given */
  accountId: z.string().min(1).optional(),
};

const scopeOf = (params: { channel?: string | undefined; accountId?: string | undefined }): PairingScope | undefined =>
  params.channel === undefined
    ? undefined
    : { channel: params.channel.toLowerCase(), accountId: params.accountId ?? DEFAULT_ACCOUNT_ID };

const DecideParams = z.strictObject({ code: z.string().trim().min(1), ...ScopeFields });

/** `pairing.list`: the codes waiting for an owner and the senders let in. */
export const pairingList = defineMethod({
  name: "pairing.list",
  params: z.strictObject(ScopeFields),
  async handle(core, params) {
    return core.pairing.list(scopeOf(params));
  },
});

/** `pairing.approve`: lets a code's sender in and tells them; a refusal is a result (`ok: false`, `reason`), not an error. */
export const pairingApprove = defineMethod({
  name: "pairing.approve",
  params: DecideParams,
  async handle(core, params) {
    return core.pairing.approve(params.code.toUpperCase(), "gateway-client", scopeOf(params));
  },
});

/** `pairing.deny`: refuses a code. */
export const pairingDeny = defineMethod({
  name: "pairing.deny",
  params: DecideParams,
  async handle(core, params) {
    return core.pairing.deny(params.code.toUpperCase(), "gateway-client", scopeOf(params));
  },
});
