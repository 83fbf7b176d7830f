import { z } from "zod";

/** A client request: `{type:"req", id, method, params}`. */
export const RequestFrameSchema = z.object({
  type: z.literal("req"),
  id: z.union([z.string().min(1), z.number()]).transform(String),
  method: z.string().min(1),
  params: z.unknown().optional(),
});

/** Stable error codes of the gateway protocol. */
export const GatewayErrorCodes = {
  INVALID_REQUEST: "INVALID_REQUEST",
  UNAUTHORIZED: "UNAUTHORIZED",
  NOT_FOUND: "NOT_FOUND",
  METHOD_NOT_FOUND: "METHOD_NOT_FOUND",
  UNAVAILABLE: "UNAVAILABLE",
  INTERNAL: "INTERNAL",
} as const satisfies Record<string, GatewayErrorCode>;
// The class and the code type live with the rest of the error family (src/errors.ts).
export { GatewayError, type GatewayErrorCode } from "../errors.js";
import type { GatewayErrorCode } from "../errors.js";

/** The answer to a request. */
export type ResponseFrame =
  | { type: "res"; id: string; ok: true; payload: unknown }
  | { type: "res"; id: string; ok: false; error: { code: GatewayErrorCode; message: string } };

/** Something that happened, pushed in order to the clients subscribed to its session (or to all). */
export interface EventFrame {
  type: "event";
  event: string;
  payload: unknown;
  seq: number;
}

/** `connect` must be the first request. */
export const ConnectParamsSchema = z.strictObject({
  auth: z.strictObject({ token: z.string().optional() }).optional(),
  client: z.string().max(100).optional(),
});
