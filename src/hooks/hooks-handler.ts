import { randomUUID } from "node:crypto";
import type http from "node:http";
import type { HooksConfig } from "../config/schema/automation.js";
import { ERROR_CATALOGUE, type ErrorCode, SwitchboardError } from "../errors.js";
import { type AutomationDeps, runAnnouncedTurn } from "../cron/run-announced-turn.js";
import { parseDeliveryTarget } from "../delivery/delivery-target.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { formatSessionKey } from "../routing/session-key.js";
import { clientAddress } from "./client-address.js";
import { createAuthLimiter, hookTokenMatches, presentedToken } from "./hook-auth.js";
import { HookAgentRequestSchema, HookWakeRequestSchema } from "./hook-request.js";
import { createIdempotencyCache } from "./idempotency-cache.js";
import { contentTypeProblem, readJsonBody } from "./read-json-body.js";

/** Dependencies of {@link createHooksHandler}. */
export interface HooksHandlerDeps extends AutomationDeps {
  config: HooksConfig;
  agentIds: () => string[];
  defaultAgentId: () => string;
  parseKey: (raw: string) => { parsed: ParsedSessionKey; agentId: string };
  resolveModelRef: (ref: string) => string;
  now: () => number;
  newId?: () => string;
  /** why a request's `Origin` is not allowed (a browser page elsewhere), or undefined; default: every origin passes */
  originRefusal?: (req: http.IncomingMessage) => string | undefined;
  /** peers whose `X-Forwarded-For` names the client (`gateway.trustedProxies`); default none */
  trustedProxies?: readonly string[];
}

/**
 * A refusal: a catalogue code (sent as the body's `error.code`; its HTTP status comes from the
 * catalogue), the message and the field it is about.
 */
class HookError extends SwitchboardError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(code, message);
    this.name = "HookError";
  }

  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}

/** zod issues to one HookError naming the first field. */
function invalid(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): HookError {
  const first = issues[0]!;
  const field = first.path.map(String).join(".") || "body";
  const message = issues.map((i) => `${i.path.map(String).join(".") || "body"}: ${i.message}`).join("; ");
  return new HookError("INVALID_REQUEST", message, field);
}

/**
 * Serves `POST <path>/agent` and `POST <path>/wake` on the gateway port when hooks are enabled.
 * Everything is checked before anything runs (token, body, agent, key, target, model), so a
 * refused request leaves no trace; an accepted one answers 202 with its runId at once.
 */
export function createHooksHandler(deps: HooksHandlerDeps) {
  // Accepted hook turns until they have handed their reply to the gate (a graceful stop waits for them).
  const inFlight = new Set<Promise<void>>();
  const { config } = deps;
  const newId = deps.newId ?? randomUUID;
  const limiter = createAuthLimiter({ now: deps.now });
  const seen = createIdempotencyCache<{ runId: string; sessionKey: string }>({ now: deps.now });

  function agentOf(requested: string | undefined): string {
    const agentId = requested ?? deps.defaultAgentId();
    if (!deps.agentIds().includes(agentId))
      throw new HookError("NOT_FOUND", `unknown agent "${agentId}" (agents: ${deps.agentIds().join(", ")})`, "agentId");
    if (config.allowedAgentIds.length > 0 && !config.allowedAgentIds.includes(agentId)) {
      throw new HookError("FORBIDDEN", `agent "${agentId}" is not in hooks.allowedAgentIds`, "agentId");
    }
    return agentId;
  }

  function checked<T>(field: string, work: () => T): T {
    try {
      return work();
    } catch (err) {
      throw new HookError("INVALID_REQUEST", `${field}: ${(err as Error).message}`, field);
    }
  }

  function agentTurn(body: unknown) {
    const parsed = HookAgentRequestSchema.safeParse(body);
    if (!parsed.success) throw invalid(parsed.error.issues);
    const request = parsed.data;
    if (request.sessionKey !== undefined && !config.allowRequestSessionKey) {
      throw new HookError(
        "INVALID_REQUEST",
        "sessionKey: not allowed (set hooks.allowRequestSessionKey to true to let hooks choose their session)",
        "sessionKey",
      );
    }
    const requested =
      request.sessionKey === undefined ? undefined : checked("sessionKey", () => deps.parseKey(request.sessionKey!));
    // A requested key names its agent; agentId, when also given, must agree with it.
    const agentId = agentOf(request.agentId ?? requested?.agentId);
    if (requested && requested.agentId !== agentId)
      throw new HookError(
        "INVALID_REQUEST",
        `sessionKey: belongs to agent "${requested.agentId}", not "${agentId}"`,
        "sessionKey",
      );
    const session = requested
      ? { ...requested, isolated: false }
      : { ...deps.parseKey(formatSessionKey({ kind: "hook", agentId, id: newId() })), isolated: true };
    if (request.deliver && request.to.toLowerCase() !== "last")
      checked("to", () => parseDeliveryTarget(request.to, deps.targetsOf, { running: true }));
    const model =
      request.model === undefined ? undefined : checked("model", () => deps.resolveModelRef(request.model!));
    const label = request.name ? `[${request.name}] ` : "";
    return {
      idempotencyKey: request.idempotencyKey,
      turn: {
        ...session,
        prompt: `${label}${request.message}`,
        model,
        timeoutMs: request.timeoutSeconds === undefined ? undefined : request.timeoutSeconds * 1000,
        announceTo: request.deliver ? request.to : undefined,
        provenance: { kind: "system" as const, channel: "hook", ...(request.name && { label: request.name }) },
        // Whoever holds the hook token is an outside system, not an owner: its tools reach only what it spawned.
        owner: false,
      },
    };
  }

  function wakeTurn(body: unknown) {
    const parsed = HookWakeRequestSchema.safeParse(body);
    if (!parsed.success) throw invalid(parsed.error.issues);
    const agentId = agentOf(parsed.data.agentId);
    return {
      idempotencyKey: parsed.data.idempotencyKey,
      turn: {
        ...deps.parseKey(deps.mainKeyOf(agentId)),
        isolated: false,
        prompt: `System: ${parsed.data.text}`,
        announceTo: parsed.data.deliver ? "last" : undefined,
        provenance: { kind: "system" as const, channel: "hook" },
        owner: false,
      },
    };
  }

  /** What a browser can send cross-site is refused before the token is read, so a page cannot lock callers out. */
  function refuseBrowser(req: http.IncomingMessage, url: URL): void {
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

  async function serve(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    refuseBrowser(req, url);
    const client = clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], deps.trustedProxies ?? []);
    const wait = limiter.retryAfterSeconds(client);
    if (wait > 0)
      return send(
        res,
        ERROR_CATALOGUE.RATE_LIMITED.status,
        { ok: false, error: { code: "RATE_LIMITED", message: `too many failed attempts; retry in ${wait} s` } },
        { "retry-after": String(wait) },
      );
    if (!hookTokenMatches(config.token!, presentedToken(req))) {
      limiter.fail(client);
      throw new HookError(
        "UNAUTHORIZED",
        "missing or wrong hook token (Authorization: Bearer <hooks.token> or x-switchboard-token)",
      );
    }
    limiter.succeed(client);
    const action = url.pathname.slice(config.path.length);
    if (action !== "/agent" && action !== "/wake")
      throw new HookError("NOT_FOUND", `no hook ${url.pathname} (hooks: ${config.path}/agent, ${config.path}/wake)`);
    const body = await readJsonBody(req, config.maxBodyBytes, `hooks.maxBodyBytes (${config.maxBodyBytes} bytes)`);
    if (!("value" in body)) throw new HookError(body.code, body.message);
    const { idempotencyKey, turn } = action === "/agent" ? agentTurn(body.value) : wakeTurn(body.value);
    const known = idempotencyKey === undefined ? undefined : seen.get(idempotencyKey);
    if (known) return send(res, 202, { ok: true, ...known, duplicate: true });
    const runId = newId();
    const accepted = { runId, sessionKey: turn.parsed.key };
    if (idempotencyKey !== undefined) seen.set(idempotencyKey, accepted);
    const running = runAnnouncedTurn(deps, { ...turn, runId }).then((outcome) => {
      const fields = {
        runId,
        sessionKey: turn.parsed.key,
        status: outcome.status,
        delivery: outcome.delivery,
        // the text the run recorded; an exception behind it was logged with its stack where it was caught
        ...(outcome.error && { error: outcome.error }),
      };
      if (outcome.status === "ok") deps.logger.info(fields, "hook turn finished");
      else deps.logger.warn(fields, "hook turn failed");
    });
    inFlight.add(running);
    void running.finally(() => inFlight.delete(running));
    send(res, 202, { ok: true, ...accepted });
  }

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
        await serve(req, res, url);
      } catch (err) {
        if (!(err instanceof HookError)) throw err;
        send(res, err.status, {
          ok: false,
          error: { code: err.code, message: err.message, ...(err.field && { field: err.field }) },
        });
      }
      return true;
    },
  };
}
