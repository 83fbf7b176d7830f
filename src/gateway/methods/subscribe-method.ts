import { z } from "zod";
import { GatewayError, GatewayErrorCodes } from "../protocol.js";
import { defineMethod } from "./method.js";

/**
 * `subscribe`: which events this connection receives from now on, replacing the previous choice:
 * the listed sessions' (`sessionKeys`, any spelling), every session's (`all: true`, operator
 * clients), or none (`sessionKeys: []`). A connection receives nothing until it subscribes.
 */
export const subscribeMethod = defineMethod({
  name: "subscribe",
  params: z
    .strictObject({
      sessionKeys: z.array(z.string().trim().min(1)).max(100).optional(),
      all: z.boolean().optional(),
    })
    .refine((p) => (p.all === true) !== (p.sessionKeys !== undefined), {
      message: "give either sessionKeys or all: true",
    }),
  async handle(core, p, caller) {
    if (!caller.subscribe)
      throw new GatewayError(GatewayErrorCodes.INVALID_REQUEST, "subscribe is for WebSocket clients");
    const sessionKeys = [...new Set((p.sessionKeys ?? []).map((key) => core.parseKey(key).parsed.key))];
    caller.subscribe({ all: p.all === true, sessionKeys });
    return { all: p.all === true, sessionKeys };
  },
});
