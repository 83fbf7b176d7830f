// The terminal chat's link to the gateway: when the gateway goes away (a restart, a crash) the chat
// says so, reconnects with backoff as the control UI does (web/connection.js), subscribes again, and
// sends what was typed meanwhile; when the gateway stays away past the bound, it gives up, and the
// chat says what was not sent and exits non-zero. A line is never dropped without a word.
import { type CliIo, CliExit, ExitCode, err, out } from "./cli-io.js";
import { reachGateway } from "./connect-cli.js";
import { type GatewayClient, GatewayClosedError, connectGateway } from "./gateway-client.js";

const MIN_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;

/** The gateway did not come back within the bound; the message says so for the person at the terminal. */
export class GatewayGoneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GatewayGoneError";
  }
}

/** A wait the connection cut off: it was replaced, so what only the old one would have told is lost. */
export class ReconnectedError extends Error {
  constructor() {
    super("reconnected to the gateway meanwhile");
    this.name = "ReconnectedError";
  }
}

/** What the chat's connection needs; tests pass their own clock. */
export interface ChatConnectionDeps {
  /** the connection the chat opened (and reported on) itself */
  first: GatewayClient;
  /** connects to the same gateway again */
  dial: () => Promise<GatewayClient>;
  /** runs on each new connection before anything else is sent on it (the chat subscribes to its session) */
  onReconnect: (client: GatewayClient) => Promise<unknown>;
  /** a line for the person at the terminal */
  notice: (line: string) => void;
  /** ms: how long to keep trying once the gateway went away */
  giveUpAfterMs: number;
  /** where the gateway is, for the messages */
  url: string;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/**
 * A gateway client that survives gateway restarts. `call` waits while the gateway is away and sends
 * the same request on the next connection (a `chat.send` carries its idempotency key, so the gateway
 * drops a repeat); it rejects with {@link GatewayGoneError} once the chat gave up, and `onClose`
 * listeners hear that give-up (or `close()`).
 */
export interface ChatConnection extends GatewayClient {
  /** set once the chat gave up on the gateway */
  readonly gone: GatewayGoneError | undefined;
  /** `waiting`, or {@link ReconnectedError} when a reconnect comes first, or {@link GatewayGoneError} */
  guard<T>(waiting: Promise<T>): Promise<T>;
}

/** Keeps the chat connected from `deps.first` on (see {@link ChatConnection}). */
export function keepChatConnected(deps: ChatConnectionDeps): ChatConnection {
  return new KeptConnection(deps);
}

class KeptConnection implements ChatConnection {
  gone: GatewayGoneError | undefined;
  private closing = false;
  private current: Promise<GatewayClient>;
  private readonly listeners = new Set<(event: string, payload: unknown) => void>();
  private readonly closeListeners = new Set<() => void>();
  /** rejecters of the guarded waits: a reconnect or a give-up cuts them off */
  private readonly cutOff = new Set<(error: Error) => void>();
  /** per connection: settles when it closed */
  private readonly ended = new WeakMap<GatewayClient, Promise<void>>();
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;

  constructor(private readonly deps: ChatConnectionDeps) {
    this.sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    this.now = deps.now ?? Date.now;
    this.current = Promise.resolve(this.attach(deps.first));
  }

  async call<T>(method: string, params?: unknown): Promise<T> {
    for (;;) {
      if (this.gone) throw this.gone;
      const client = await this.current;
      try {
        return await client.call<T>(method, params);
      } catch (error) {
        if (!(error instanceof GatewayClosedError) || this.closing) throw error;
        await this.ended.get(client); // then `current` is the reconnect: send the same request there
      }
    }
  }

  onEvent(listener: (event: string, payload: unknown) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onClose(listener: () => void): void {
    this.closeListeners.add(listener);
  }

  guard<T>(waiting: Promise<T>): Promise<T> {
    if (this.gone) return Promise.reject(this.gone);
    let cut: (error: Error) => void = () => undefined;
    const cutPromise = new Promise<never>((_, reject) => {
      cut = reject;
      this.cutOff.add(reject);
    });
    return Promise.race([waiting, cutPromise]).finally(() => this.cutOff.delete(cut));
  }

  async close(): Promise<void> {
    this.closing = true;
    const client = await this.current.catch(() => undefined);
    await client?.close();
    for (const listener of this.closeListeners) listener();
  }

  private attach(client: GatewayClient): GatewayClient {
    client.onEvent((event, payload) => {
      for (const listener of this.listeners) listener(event, payload);
    });
    this.ended.set(client, new Promise((resolve) => client.onClose(() => resolve())));
    client.onClose(() => {
      if (this.closing || this.gone) return;
      const bound = seconds(this.deps.giveUpAfterMs);
      this.deps.notice(`[the gateway at ${this.deps.url} went away; reconnecting for up to ${bound}]`);
      this.current = this.reconnect();
      this.current.catch(() => undefined); // a give-up reaches the waiting calls and the onClose listeners
    });
    return client;
  }

  private async reconnect(): Promise<GatewayClient> {
    const deadline = this.now() + this.deps.giveUpAfterMs;
    for (let attempt = 0; ; attempt++) {
      await this.sleep(Math.min(MAX_DELAY_MS, MIN_DELAY_MS * 2 ** attempt, Math.max(0, deadline - this.now())));
      let client: GatewayClient | undefined;
      try {
        client = await this.deps.dial();
        await this.deps.onReconnect(client);
        this.deps.notice("[reconnected to the gateway]");
        for (const reject of this.cutOff) reject(new ReconnectedError());
        return this.attach(client);
      } catch (error) {
        client?.close().catch(() => undefined);
        if (this.now() >= deadline) throw this.giveUp(error);
      }
    }
  }

  private giveUp(error: unknown): GatewayGoneError {
    const bound = seconds(this.deps.giveUpAfterMs);
    this.gone = new GatewayGoneError(
      `the gateway at ${this.deps.url} went away and did not come back within ${bound} (${(error as Error).message})`,
    );
    for (const reject of this.cutOff) reject(this.gone);
    for (const listener of this.closeListeners) listener();
    return this.gone;
  }
}

/** The chat's connection: reached as every command reaches the gateway, then kept (see {@link keepChatConnected}). */
export async function connectChat(
  io: CliIo,
  configFlag: string | undefined,
  flags: { url?: string; token?: string; giveUpAfter?: string },
  onReconnect: (client: GatewayClient) => Promise<unknown>,
): Promise<ChatConnection> {
  const giveUpAfter = Number(flags.giveUpAfter ?? 60);
  if (!(Number.isFinite(giveUpAfter) && giveUpAfter >= 0)) {
    err(io, `--give-up-after must be a number of seconds (0 or more), got "${flags.giveUpAfter}"`);
    throw new CliExit(ExitCode.badInput);
  }
  const { client, target } = await reachGateway(io, configFlag, flags);
  return keepChatConnected({
    first: client,
    dial: () => connectGateway(target.url, target.token),
    onReconnect,
    notice: (line) => out(io, line),
    giveUpAfterMs: giveUpAfter * 1000,
    url: target.url,
  });
}

/** How a run ended, as `agent.wait` answers. */
interface RunRecord {
  status: string;
  text?: string;
  error?: string;
}

/**
 * The end of a run this terminal started: its event, or `agent.wait` when the event may have passed:
 * after a reconnect (the restarted gateway replays the run under the same id, perhaps before the chat
 * subscribed again) or for a `repeat` (a send the gateway had already taken before the connection
 * dropped). Undefined when the gateway does not know the run.
 */
export async function runEnd<T>(
  connection: ChatConnection,
  runId: string,
  event: Promise<T>,
  repeat = false,
): Promise<T | RunRecord | undefined> {
  for (let ask = repeat; ; ask = true) {
    const asked = ask
      ? connection
          .call<RunRecord>("agent.wait", { runId, timeoutMs: 3_600_000 })
          .catch((error: Error) => (error instanceof GatewayGoneError ? Promise.reject(error) : undefined))
      : new Promise<never>(() => undefined);
    try {
      return await connection.guard(Promise.race([event, asked]));
    } catch (error) {
      if (!(error instanceof ReconnectedError)) throw error;
    }
  }
}

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
