import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCodes, SwitchboardError, type Logger } from "../../src/index.js";
import { describeDiscordError } from "./discord-errors.js";

/** Backoff between failed logins at start: from `minMs`, times 1.8 per failure, up to `maxMs`, with 25% jitter. */
export interface LoginBackoff {
  minMs: number;
  maxMs: number;
}

/** Telegram's poll backoff: 2 s to 30 s. */
const DEFAULT_LOGIN_BACKOFF: LoginBackoff = { minMs: 2_000, maxMs: 30_000 };

/** One account's connection state while it logs in in the background. */
export interface LoginState {
  /** resolves while connected; rejects (a retryable send failure) while Discord has not been reached */
  ready(): Promise<void>;
  health(): { connected: boolean; lastError?: string };
  /** stops trying and waits for a login in flight to settle (before the client is destroyed) */
  stop(): Promise<void>;
}

/** A refusal no retry fixes: a rejected token or a refused intent (the start fails with what to fix). */
const isRefusal = (err: unknown) => err instanceof SwitchboardError && err.code === ErrorCodes.CONFIG_INVALID;

/** Where a login stands: undefined once logged in, else why not (the health's `lastError`). */
interface Standing {
  lastError: string | undefined;
}

/**
 * Runs `connect` once: a refusal fails the start; Discord away (5xx, no connection, no READY in
 * time) does not. The account then starts not connected and `connect` is tried again after the
 * backoff until it succeeds, a refusal comes (logged; the account stays not connected), or `stop`.
 */
export async function loginOrRetry(connect: () => Promise<void>, context: LoginContext): Promise<LoginState> {
  const standing: Standing = { lastError: undefined };
  try {
    await connect();
  } catch (err) {
    if (isRefusal(err)) throw err;
    standing.lastError = `not connected: Discord not reached at start, logging in again in the background: ${describeDiscordError(err)}`;
    context.logger.warn(
      { accountId: context.accountId, err: describeDiscordError(err) },
      "discord unreachable at start: starting not connected, logging in in the background",
    );
  }
  const stopping = new AbortController();
  const trying =
    standing.lastError === undefined ? Promise.resolve() : retry(connect, standing, context, stopping.signal);
  return {
    ready: () =>
      standing.lastError === undefined ? Promise.resolve() : Promise.reject(new Error(`Discord ${standing.lastError}`)),
    health: () =>
      standing.lastError === undefined ? { connected: true } : { connected: false, lastError: standing.lastError },
    async stop() {
      stopping.abort();
      await trying;
    },
  };
}

/** Who logs in, and the backoff (./login-retry.ts DEFAULT_LOGIN_BACKOFF when not given). */
interface LoginContext {
  accountId: string;
  logger: Logger;
  backoff?: LoginBackoff | undefined;
}

/** `connect` after the backoff until it succeeds, a refusal comes, or `signal` aborts; `standing` follows. */
async function retry(connect: () => Promise<void>, standing: Standing, context: LoginContext, signal: AbortSignal) {
  const { accountId, logger } = context;
  const backoff = context.backoff ?? DEFAULT_LOGIN_BACKOFF;
  for (let failures = 1; ; failures++) {
    const delay = Math.min(backoff.maxMs, backoff.minMs * 1.8 ** (failures - 1)) * (0.75 + Math.random() * 0.5);
    if (!(await sleep(delay, true, { signal }).catch(() => false))) return;
    try {
      await connect();
      standing.lastError = undefined;
      return void logger.info({ accountId, failures }, "discord reached: logged in after the outage at start");
    } catch (err) {
      if (signal.aborted) return;
      if (isRefusal(err)) {
        standing.lastError = `not connected: Discord refused the login (not retried): ${describeDiscordError(err)}`;
        return void logger.error(
          { accountId, err: describeDiscordError(err) },
          "discord refused the login; not retried",
        );
      }
      standing.lastError = `not connected: Discord not reached yet, logging in again in the background: ${describeDiscordError(err)}`;
      logger.warn({ accountId, err: describeDiscordError(err), failures }, "discord login failed; retrying");
    }
  }
}
