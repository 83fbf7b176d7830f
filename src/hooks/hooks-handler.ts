import { randomUUID } from "node:crypto";
import type http from "node:http";
import type { HooksConfig } from "../config/schema/automation.js";
import type { StartTurn, TurnStart } from "../agents/stored-turn.js";
import type { AutomationDeps } from "../cron/run-announced-turn.js";
import { ERROR_CATALOGUE } from "../errors.js";
import { InboxWriteError } from "../inbound/inbox.js";
import { requestClient } from "./client-address.js";
import { type HookAuthLimiter, hookTokenMatches, memoryHookAuthLimiter, presentedToken } from "./hook-auth.js";
import { HookError, sendJson } from "./hook-error.js";
import { type HookTurn, type HookTurnDeps, agentHookTurn, wakeHookTurn } from "./hook-turns.js";
import { contentTypeProblem, readJsonBody } from "./read-json-body.js";

/** Dependencies of {@link createHooksHandler}: what reading a hook needs of the automation deps, and where its turn is stored. */
export interface HooksHandlerDeps
  extends Pick<AutomationDeps, "parseKey" | "mainKeyOf" | "targetsOf" | "logger" | "now"> {
  config: HooksConfig;
  agentIds: () => string[];
  defaultAgentId: () => string;
  resolveModelRef: (ref: string) => string;
  /** stores a turn in its session's inbox and runs it (the hook runner replays it after a restart) */
  startTurn: StartTurn;
  newId?: () => string;
  /** peers whose `X-Forwarded-For` names the client (`gateway.trustedProxies`); default none */
  trustedProxies?: readonly string[];
  /** whether the state's storage answers (PostgreSQL can be away); default: always */
  storageHealth?: () => { ok: boolean; reason?: string };
  /** before a turn is stored: the owner takes in what other gateways handed it first, so arrival order holds across gateways */
  beforeStore?: () => Promise<void>;
  /** the token lockout; default one in memory (on PostgreSQL the cluster's, src/cluster/hook-auth-sql.ts) */
  authLimiter?: HookAuthLimiter;
  /** the run id of a turn stored under a dedupe key (`storedRunId`, src/agents/uuid-v5.ts); default a new id per turn */
  runIdOf?: (dedupeKey: string) => string;
}

/**
 * The headers only a browser adds to a request; a server calling a hook sends none of them.
 * Not `Sec-Fetch-Mode`: Node's own `fetch` sends `sec-fetch-mode: cors` (test/hooks/hooks-handler.test.ts calls with it).
 */
const BROWSER_MARKS = ["origin", "sec-fetch-site"] as const;

/**
 * What a browser can send is refused before the token is read, so a page cannot lock callers out:
 * any browser request, whatever its origin (hook callers are servers; a DNS-rebound page is
 * same-origin to itself, but every current browser marks its POST), then a non-JSON type.
 * No Host check: it would add nothing against DNS rebinding (the marks catch the page; a server can
 * send any Host) and would refuse a caller whose reverse proxy keeps the public Host.
 */
function refuseBrowser(req: http.IncomingMessage, url: URL): void {
  const mark = BROWSER_MARKS.find((name) => req.headers[name] !== undefined);
  if (mark)
    throw new HookError("FORBIDDEN", `hooks are for servers; a browser's request (its ${mark} header) is refused`);
  if (url.searchParams.has("token"))
    throw new HookError(
      "INVALID_REQUEST",
      "token: send the token in Authorization: Bearer or x-switchboard-token, never in the URL",
      "token",
    );
  if (req.method !== "POST") throw new HookError("METHOD_NOT_ALLOWED", "use POST");
  const wrongType = contentTypeProblem(req);
  if (wrongType) throw new HookError(wrongType.code, wrongType.message);
}

/** A hooks handler's state: its deps and the auth limiter. */
interface HookState {
  deps: HooksHandlerDeps;
  turnDeps: HookTurnDeps;
  limiter: HookAuthLimiter;
}

/** The limiter's call; a lockout that cannot be read or counted (its database away) refuses the request: 503. */
async function limited<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new HookError(
      "STORAGE_FAILED",
      `the hook lockout could not be read (${reason}); nothing runs, send it again`,
    );
  }
}

/**
 * The token check, with the limiter: the token compared (constant time, no I/O), then the attempt
 * counted and answered in one atomic step; a client over the limit gets 429 whether its token was
 * right or wrong. False when the client must wait (already answered 429).
 */
async function authorized(state: HookState, req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> {
  const { deps, limiter } = state;
  const client = requestClient(req, deps.trustedProxies ?? []);
  const right = hookTokenMatches(deps.config.token!, presentedToken(req));
  const wait = await limited(limiter.attempt(client, right));
  if (wait > 0) {
    const error = { code: "RATE_LIMITED", message: `too many failed attempts; retry in ${wait} s` };
    sendJson(res, ERROR_CATALOGUE.RATE_LIMITED.status, { ok: false, error }, { "retry-after": String(wait) });
    return false;
  }
  if (!right) {
    const message = "missing or wrong hook token (Authorization: Bearer <hooks.token> or x-switchboard-token)";
    throw new HookError("UNAUTHORIZED", message);
  }
  return true;
}

/**
 * Stores the checked turn in its session's inbox (once per idempotency key: `hook:<key>`, kept as
 * long as the inbox keeps dedupe memory), then answers 202 with its runId; a repeat of the key runs
 * nothing and answers with the first run. A turn that could not be stored is a 503: nothing runs.
 */
async function accept(state: HookState, res: http.ServerResponse, { idempotencyKey, turn }: HookTurn): Promise<void> {
  const dedupeKey = idempotencyKey === undefined ? undefined : `hook:${idempotencyKey}`;
  await state.deps.beforeStore?.();
  let started: TurnStart;
  try {
    const runId = dedupeKey === undefined ? undefined : state.deps.runIdOf?.(dedupeKey);
    started = await state.deps.startTurn(turn, { dedupeKey, ...(runId && { runId }) });
  } catch (err) {
    if (err instanceof InboxWriteError)
      throw new HookError("STORAGE_FAILED", `${err.message}; nothing runs, send it again`);
    throw err;
  }
  const { runId, sessionKey } = started;
  sendJson(res, 202, { ok: true, runId, sessionKey, ...(started.status !== "new" && { duplicate: true }) });
}

/** Checks and serves one hook request; a refusal is thrown as a {@link HookError}. */
async function serve(state: HookState, req: http.IncomingMessage, res: http.ServerResponse, url: URL) {
  const { config } = state.deps;
  refuseBrowser(req, url);
  // With the database away the lockout and the store would wait for it while the caller hangs: refuse now, store nothing.
  const storage = state.deps.storageHealth?.();
  if (storage && !storage.ok)
    throw new HookError(
      "STORAGE_FAILED",
      `the state's database is unreachable (${storage.reason}); nothing runs, send it again`,
    );
  if (!(await authorized(state, req, res))) return;
  const action = url.pathname.slice(config.path.length);
  if (action !== "/agent" && action !== "/wake")
    throw new HookError("NOT_FOUND", `no hook ${url.pathname} (hooks: ${config.path}/agent, ${config.path}/wake)`);
  const body = await readJsonBody(req, config.maxBodyBytes, `hooks.maxBodyBytes (${config.maxBodyBytes} bytes)`);
  if (!("value" in body)) throw new HookError(body.code, body.message);
  const { turnDeps } = state;
  await accept(
    state,
    res,
    action === "/agent" ? agentHookTurn(turnDeps, body.value) : wakeHookTurn(turnDeps, body.value),
  );
}

/**
 * Serves `POST <path>/agent` and `POST <path>/wake` on the gateway port when hooks are enabled.
 * Everything is checked before anything runs (token, body, agent, key, target, model), so a
 * refused request leaves no trace; an accepted one is stored in the inbox, like a message, and
 * answered 202 with its runId before its turn runs.
 */
export function createHooksHandler(deps: HooksHandlerDeps) {
  const { config } = deps;
  const state: HookState = {
    deps,
    turnDeps: { ...deps, newId: deps.newId ?? randomUUID },
    limiter: deps.authLimiter ?? memoryHookAuthLimiter({ now: deps.now }),
  };

  return {
    /** Serves the request when it is for a hook path; false otherwise (and always when hooks are off). */
    async handle(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<boolean> {
      if (!config.enabled || (url.pathname !== config.path && !url.pathname.startsWith(`${config.path}/`)))
        return false;
      try {
        await serve(state, req, res, url);
      } catch (err) {
        if (!(err instanceof HookError)) throw err;
        const error = { code: err.code, message: err.message, ...(err.field && { field: err.field }) };
        sendJson(res, err.status, { ok: false, error });
      }
      return true;
    },
  };
}
