import { connectGateway } from "./gateway-client.js";
import { type GatewayTarget, unreachableMessage } from "./gateway-target.js";

/** A gateway's answer, or why there is none (for a person; the caller falls back to the files). */
export type GatewayAnswer<T> = { value: T; problem?: undefined } | { value?: undefined; problem: string };

/** Calls `method` on the target gateway; says why not when none runs or it does not answer within 1.5 s. */
export async function askGateway<T>(target: GatewayTarget, method: string): Promise<GatewayAnswer<T>> {
  // Nothing holds the home's lock: no gateway to ask, and no need to load the WebSocket client.
  if (target.namedBy === "none") return { problem: unreachableMessage(target) };
  try {
    const client = await connectGateway(target.url, target.token, { timeoutMs: 1_500 });
    try {
      return { value: await client.call<T>(method) };
    } finally {
      await client.close();
    }
  } catch (error) {
    return { problem: unreachableMessage(target, (error as Error).message || (error as { code?: string }).code) };
  }
}
