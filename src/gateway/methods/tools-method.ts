import { z } from "zod";
import { GatewayError, GatewayErrorCodes } from "../protocol.js";
import { defineMethod } from "./method.js";

/** `tools.invoke`: runs one session tool by name with JSON arguments. */
export const toolsInvoke = defineMethod({
  name: "tools.invoke",
  params: z.strictObject({
    tool: z.string().trim().min(1),
    args: z.record(z.string(), z.unknown()).default({}),
    sessionKey: z.string().trim().min(1).optional(),
  }),
  async handle(_core, p) {
    throw new GatewayError(GatewayErrorCodes.NOT_FOUND, `unknown tool "${p.tool}" (no session tools are installed yet)`);
  },
});
