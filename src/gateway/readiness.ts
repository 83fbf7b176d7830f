/** Where the gateway is in its life: `ready` only between a finished start and the start of a stop. */
export type GatewayPhase = "starting" | "ready" | "draining";

/** One part of the readiness report, with why it is (not) ok. */
interface ReadinessPart {
  kind: "state" | "channel" | "mcp";
  /** `state`, `<channel>/<account>` or the MCP server's name */
  name: string;
  ok: boolean;
  reason: string;
}

/** What `GET /readyz`, the `health` method and `switchboard health` report. */
export interface ReadinessReport {
  /** true only once the stores are open and replay is done, and until a stop begins */
  ready: boolean;
  phase: GatewayPhase;
  parts: ReadinessPart[];
}

/** A channel account as readiness sees it. */
export interface AccountState {
  channel: string;
  accountId: string;
  connected: boolean;
  /** why it is not connected (the adapter's last error), when known */
  reason?: string | undefined;
  /** started send-only: another gateway holds the account and receives its messages */
  sendOnly?: boolean;
}

/** The readiness reason of a send-only account. */
export const SEND_ONLY_REASON = "send-only: another gateway holds this account and receives its messages";

/** A configured MCP server as readiness sees it. */
interface McpState {
  name: string;
  state: string;
  error?: string | undefined;
}

const PHASE_REASON: Record<GatewayPhase, string> = {
  starting: "starting: opening the stores, connecting MCP servers, replaying interrupted messages",
  ready: "stores open, replay done",
  draining: "draining: stopping channels and letting running turns finish",
};

/** The gateway's phase, moved forward by its start and stop (never back). */
export function createReadiness() {
  let phase: GatewayPhase = "starting";
  return {
    phase: (): GatewayPhase => phase,
    /** The start finished: stores open, interrupted messages replayed, channels started. */
    ready(): void {
      if (phase === "starting") phase = "ready";
    },
    /** A stop began: readiness fails from now on. */
    draining(): void {
      phase = "draining";
    },
  };
}

/**
 * The readiness report: ready follows the phase alone, so a channel or MCP server that is down
 * (reported with its reason) does not take a gateway that answers every other chat out of service.
 */
export function readinessReport(
  phase: GatewayPhase,
  accounts: readonly AccountState[],
  mcp: readonly McpState[],
): ReadinessReport {
  const parts: ReadinessPart[] = [{ kind: "state", name: "state", ok: phase === "ready", reason: PHASE_REASON[phase] }];
  for (const account of accounts)
    parts.push({
      kind: "channel",
      name: `${account.channel}/${account.accountId}`,
      ok: account.connected,
      reason:
        account.sendOnly && account.connected
          ? SEND_ONLY_REASON
          : account.connected
            ? "connected"
            : (account.reason ?? "not connected"),
    });
  for (const server of mcp)
    parts.push({
      kind: "mcp",
      name: server.name,
      ok: server.state === "connected",
      reason: server.error ? `${server.state}: ${server.error}` : server.state,
    });
  return { ready: phase === "ready", phase, parts };
}
