import { connectGateway } from "./gateway-client.js";

/** Calls `method` on the running gateway, or resolves undefined when none answers within 1.5 s. */
export async function askGateway<T>(url: string, token: string | undefined, method: string): Promise<T | undefined> {
  try {
    const client = await connectGateway(url, token, { timeoutMs: 1_500 });
    try {
      return await client.call<T>(method);
    } finally {
      await client.close();
    }
  } catch {
    return undefined; // no gateway (or not ours): the caller falls back to the files
  }
}
