import { z } from "zod";
import { describeSetAside } from "../../inbound/inbox-rows.js";
import { GatewayError, GatewayErrorCodes } from "../protocol.js";
import { defineMethod } from "./method.js";

const notSetAside = (id: string) =>
  new GatewayError(GatewayErrorCodes.NOT_FOUND, `no set-aside inbox entry "${id}"; inbox.list shows them`);

/** `inbox.list`: the messages set aside because their turn stopped the gateway at every start. */
export const inboxList = defineMethod({
  name: "inbox.list",
  params: z.strictObject({}),
  async handle(core) {
    return { entries: core.inbox.listSetAside().map(describeSetAside) };
  },
});

/** `inbox.retry`: runs a set-aside message again (three more starts before it is set aside again). */
export const inboxRetry = defineMethod({
  name: "inbox.retry",
  params: z.strictObject({ id: z.string().min(1) }),
  async handle(core, { id }) {
    const result = await core.pipeline.retry(id);
    if (!result) throw notSetAside(id);
    return { id, status: result.status, ...(result.status === "queued" && { runId: result.runId }) };
  },
});

/** `inbox.drop`: forgets a set-aside message for good (its dedupe key is kept). */
export const inboxDrop = defineMethod({
  name: "inbox.drop",
  params: z.strictObject({ id: z.string().min(1) }),
  async handle(core, { id }) {
    if (!(await core.inbox.drop(id))) throw notSetAside(id);
    return { id, dropped: true };
  },
});
