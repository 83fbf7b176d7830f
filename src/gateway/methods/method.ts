import type { z } from "zod";
import { formatPath } from "../../config/format-issues.js";
import type { EventSelection } from "../event-subscription.js";
import type { GatewayCore } from "../gateway-core.js";
import { GatewayError, GatewayErrorCodes } from "../protocol.js";

/** Who is calling a method. */
export interface MethodCaller {
  /** a connection id, for logs */
  client: string;
  /** replaces which events this connection receives (WebSocket clients only) */
  subscribe?: (selection: EventSelection) => void;
}

/**
 * One gateway method: a strict params schema and a handler returning the payload. `C` is what the
 * handler reads of the core: a read a standby answers itself (./read-core.ts) names only that.
 */
export interface GatewayMethod<S extends z.ZodType = z.ZodType, C = GatewayCore> {
  name: string;
  params: S;
  handle(core: C, params: z.output<S>, caller: MethodCaller): Promise<unknown>;
}

/** Declares a method with its params type inferred from the schema. */
export function defineMethod<S extends z.ZodType, C = GatewayCore>(method: GatewayMethod<S, C>): GatewayMethod<S, C> {
  return method;
}

/** Validates `raw` against the method's schema; a failure is INVALID_REQUEST naming every field. */
export function parseParams<S extends z.ZodType>(
  method: Pick<GatewayMethod<S>, "name" | "params">,
  raw: unknown,
): z.output<S> {
  const parsed = method.params.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
  throw new GatewayError(GatewayErrorCodes.INVALID_REQUEST, `invalid ${method.name} params: ${problems.join("; ")}`);
}
