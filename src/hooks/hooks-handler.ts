import { randomUUID } from "node:crypto";
import type http from "node:http";
import type { HooksConfig } from "../config/schema/automation.js";
import { type AutomationDeps, runAnnouncedTurn } from "../cron/run-announced-turn.js";
import { ERROR_CATALOGUE } from "../errors.js";
import { clientAddress } from "./client-address.js";
import { createAuthLimiter, hookTokenMatches, presentedToken } from "./hook-auth.js";
import { HookError, sendJson } from "./hook-error.js";
import { type HookTurn, type HookTurnDeps, agentHookTurn, wakeHookTurn } from "./hook-turns.js";
import { createIdempotencyCache } from "./idempotency-cache.js";
import { contentTypeProblem, readJsonBody } from "./read-json-body.js";

/** Dependencies of {@link createHooksHandler}: the gateway's automation deps plus what only hooks need. */
export interface HooksHandlerDeps extends AutomationDeps {
  config: HooksConfig;
  agentIds: () => string[];
  defaultAgentId: () => string;
  resolveModelRef: (ref: string) => string;
  newId?: () => string;
  /** why a request's `Origin` is not allowed (a browser page elsewhere), or undefined; default: every origin passes */
  originRefusal?: (req: http.IncomingMessage) => string | undefined;
  /** peers whose `X-Forwarded-For` names the client (`gateway.trustedProxies`); default none */
  trustedProxies?: readonly string[];
}

/** What a browser can send cross-site is refused before the token is read, so a page cannot lock callers out. */
function refuseBrowser(deps: HooksHandlerDeps, req: http.IncomingMessage, url: URL): void {
  if (url.searchParams.has("token"))
    throw new HookError(
      "INVALID_REQUEST",
      "token: send the token in Authorization: Bearer or x-switchboard-token, never in the URL",
      "token",
    );
  const foreign = deps.originRefusal?.(req);
  if (foreign) throw new HookError("FORBIDDEN", foreign);
  if (req.method !== "POST") throw new HookError("METHOD_NOT_ALLOWED", "use POST");
  const wrongType = contentTypeProblem(req);
  if (wrongType) throw new HookError(wrongType.code, wrongType.message);
}

/** Logs how an accepted hook turn ended. */
function logHookTurn(deps: HooksHandlerDeps, runId: string, sessionKey: string, outcome: HookOutcome): void {
  const fields = {
    runId,
    sessionKey,
    status: outcome.status,
    delivery: outcome.delivery,
    // the text the run recorded; an exception behind it was logged with its stack where it was caught
    ...(outcome.error && { error: outcome.error }),
  };
  if (outcome.status === "ok") deps.logger.info(fields, "hook turn finished");
  else deps.logger.warn(fields, "hook turn failed");
}

type HookOutcome = Awaited<ReturnType<typeof runAnnouncedTurn>>;

/** A hooks handler's state: its deps, the auth limiter, the idempotency keys seen, the turns in flight. */
interface HookState {
  deps: HooksHandlerDeps;
  turnDeps: HookTurnDeps;
  limiter: ReturnType<typeof createAuthLimiter>;
  seen: ReturnType<typeof createIdempotencyCache<{ runId: string; sessionKey: string }>>;
  // Accepted hook turns until they have handed their reply to the gate (a graceful stop waits for them).
  inFlight: Set<Promise<void>>;
}

/** The token check, with the limiter; false when the client must wait (already answered 429). */
function authorized(state: HookState, req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const { deps, limiter } = state;
  const client = clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], deps.trustedProxies ?? []);
  const wait = limiter.retryAfterSeconds(client);
  if (wait > 0) {
    const error = { code: "RATE_LIMITED", message: `too many failed attempts; retry in ${wait} s` };
    sendJson(res, ERROR_CATALOGUE.RATE_LIMITED.status, { ok: false, error }, { "retry-after": String(wait) });
    return false;
  }
  if (!hookTokenMatches(deps.config.token!, presentedToken(req))) {
    limiter.fail(client);
    const message = "missing or wrong hook token (Authorization: Bearer <hooks.token> or x-switchboard-token)";
    throw new HookError("UNAUTHORIZED", message);
  }
  limiter.succeed(client);
  return true;
}

/** Starts the checked turn (once per idempotency key) and answers 202 with its runId. */
function accept(state: HookState, res: http.ServerResponse, { idempotencyKey, turn }: HookTurn): void {
  const known = idempotencyKey === undefined ? undefined : state.seen.get(idempotencyKey);
  if (known) {
    sendJson(res, 202, { ok: true, ...known, duplicate: true });
    return;
  }
  const runId = state.turnDeps.newId();
  const accepted = { runId, sessionKey: turn.parsed.key };
  if (idempotencyKey !== undefined) state.seen.set(idempotencyKey, accepted);
  const running = runAnnouncedTurn(state.deps, { ...turn, runId }).then((outcome) =>
    logHookTurn(state.deps, runId, turn.parsed.key, outcome),
  );
  state.inFlight.add(running);
  void running.finally(() => state.inFlight.delete(running));
  sendJson(res, 202, { ok: true, ...accepted });
}

/** Checks and serves one hook request; a refusal is thrown as a {@link HookError}. */
async function serve(state: HookState, req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
  const { config } = state.deps;
  refuseBrowser(state.deps, req, url);
  if (!authorized(state, req, res)) return;
  const action = url.pathname.slice(config.path.length);
  if (action !== "/agent" && action !== "/wake")
    throw new HookError("NOT_FOUND", `no hook ${url.pathname} (hooks: ${config.path}/agent, ${config.path}/wake)`);
  const body = await readJsonBody(req, config.maxBodyBytes, `hooks.maxBodyBytes (${config.maxBodyBytes} bytes)`);
  if (!("value" in body)) throw new HookError(body.code, body.message);
  const { turnDeps } = state;
  accept(state, res, action === "/agent" ? agentHookTurn(turnDeps, body.value) : wakeHookTurn(turnDeps, body.value));
}

/**
 * Serves `POST <path>/agent` and `POST <path>/wake` on the gateway port when hooks are enabled.
 * Everything is checked before anything runs (token, body, agent, key, target, model), so a
 * refused request leaves no trace; an accepted one answers 202 with its runId at once.
 */
export function createHooksHandler(deps: HooksHandlerDeps) {
  const { config } = deps;
  const state: HookState = {
    deps,
    turnDeps: { ...deps, newId: deps.newId ?? randomUUID },
    limiter: createAuthLimiter({ now: deps.now }),
    seen: createIdempotencyCache<{ runId: string; sessionKey: string }>({ now: deps.now }),
    inFlight: new Set<Promise<void>>(),
  };
  const { inFlight } = state;

  return {
    /** Settles when every accepted hook turn has ended and handed its reply to the delivery gate. */
    async idle(): Promise<void> {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },

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
