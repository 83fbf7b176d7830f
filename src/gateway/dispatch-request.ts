import { resultError } from "../errors.js";
import type { GatewayCore } from "./gateway-core.js";
import { METHODS } from "./method-table.js";
import type { z } from "zod";
import type { Logger } from "../logger.js";
import { type GatewayMethod, type MethodCaller, parseParams } from "./methods/method.js";
import { partialMethod } from "./partial-methods.js";
import { GatewayErrorCodes, RequestFrameSchema, type ResponseFrame } from "./protocol.js";

/** The id a client gave a frame, when it gave a usable one. */
export function frameId(raw: unknown): string {
  const id = typeof raw === "object" && raw !== null ? (raw as { id?: unknown }).id : undefined;
  return typeof id === "string" || typeof id === "number" ? String(id) : "";
}

/** Runs one request frame against the method table; never throws. */
export async function dispatchRequest(core: GatewayCore, raw: unknown, caller: MethodCaller): Promise<ResponseFrame> {
  const frame = RequestFrameSchema.safeParse(raw);
  if (!frame.success)
    return {
      type: "res",
      id: frameId(raw),
      ok: false,
      error: { code: GatewayErrorCodes.INVALID_REQUEST, message: 'expected {type:"req", id, method, params}' },
    };
  const method = METHODS.get(frame.data.method);
  if (!method) {
    return {
      type: "res",
      id: frame.data.id,
      ok: false,
      error: {
        code: GatewayErrorCodes.METHOD_NOT_FOUND,
        message: `unknown method "${frame.data.method}" (methods: ${[...METHODS.keys()].join(", ")})`,
      },
    };
  }
  // A core holding only some partitions reads sessions in SQL and refuses writes of others' (./partial-methods.ts).
  const chosen = core.partial ? partialMethod(core.partial, method) : method;
  return answerWith(chosen, core, { id: frame.data.id, params: frame.data.params }, { caller, logger: core.logger });
}

/** Runs one parsed request with `method` on `core` (the gateway's, or a standby's read core); never throws. */
export async function answerWith<C>(
  method: GatewayMethod<z.ZodType, C>,
  core: C,
  request: { id: string; params: unknown },
  context: { caller: MethodCaller; logger: Logger },
): Promise<ResponseFrame> {
  try {
    const payload = await method.handle(core, parseParams(method, request.params), context.caller);
    return { type: "res", id: request.id, ok: true, payload };
  } catch (err) {
    const { code, message } = resultError(err, context.logger, "gateway method failed", {
      method: method.name,
      client: context.caller.client,
    });
    return { type: "res", id: request.id, ok: false, error: { code, message } };
  }
}
