// How the fake Discord's REST routes (./rest-routes.ts) answer: a status, a JSON body or none, headers.
import type http from "node:http";

/** Answers the request being served. */
export type Reply = (status: number, json?: unknown, headers?: Record<string, string>) => void;

/** The {@link Reply} of `res`. */
export function replyTo(res: http.ServerResponse): Reply {
  return (status, json, headers = {}) => {
    // An empty body must come without a JSON content type: discord.js would try to parse it.
    res.writeHead(status, json === undefined ? headers : { "content-type": "application/json", ...headers });
    res.end(json === undefined ? "" : JSON.stringify(json));
  };
}

/** A request's JSON body, or undefined when it has none. */
export async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown> | undefined> {
  let raw = "";
  for await (const chunk of req) raw += chunk;
  return raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
}
