import { isSwitchboardError } from "../errors.js";
import type { GatewayCore } from "./gateway-core.js";
import { METHODS } from "./method-table.js";
import { type MethodCaller, parseParams } from "./methods/method.js";
import {
  GatewayError,
  type GatewayErrorCode,
  GatewayErrorCodes,
  RequestFrameSchema,
  type ResponseFrame,
} from "./protocol.js";

/** Turns any thrown value into the `{code, message}` a client sees. */
export function toErrorShape(err: unknown): { code: GatewayErrorCode; message: string } {
  if (err instanceof GatewayError) return { code: err.code, message: err.message };
  if (isSwitchboardError(err))
    return {
      code:
        err.code === "INVALID_SESSION_KEY" || err.code === "INVALID_ARGUMENT"
          ? GatewayErrorCodes.INVALID_REQUEST
          : GatewayErrorCodes.INTERNAL,
      message: err.message,
    };
  return { code: GatewayErrorCodes.INTERNAL, message: err instanceof Error ? err.message : String(err) };
}

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
  try {
    const payload = await method.handle(core, parseParams(method, frame.data.params), caller);
    return { type: "res", id: frame.data.id, ok: true, payload };
  } catch (err) {
    const error = toErrorShape(err);
    if (error.code === GatewayErrorCodes.INTERNAL)
      core.logger.error({ method: frame.data.method, client: caller.client, err }, "gateway method failed");
    return { type: "res", id: frame.data.id, ok: false, error };
  }
}
