import { Gauge, type Registry } from "prom-client";

/** Where the gauges read the running gateway; each is called at scrape time only. */
export interface GaugeSources {
  /** when each pending outbox item was created (ms) */
  outboxPending: () => readonly { createdAt: number }[];
  inboxPending: () => number;
  /** every lane with work */
  lanes: () => readonly { running: boolean; queued: number }[];
  /** chat-turn slots held and waited for */
  chatSlots: () => { held: number; waiting: number };
  /** each MCP server's state */
  mcp: () => readonly { state: string }[];
  /** each channel account and whether it is connected */
  accounts: () => readonly { channel: string; accountId: string; connected: boolean }[];
  now: () => number;
}

const MCP_STATES = ["connecting", "connected", "failed", "closed"] as const;

/** A gauge whose value is read from the gateway when scraped: nothing is done per message. */
function readGauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** Registers the gateway's gauges on `registry`, all read from `sources` at scrape time. */
export function registerGauges(registry: Registry, sources: GaugeSources): void {
  readGauge(
    registry,
    "switchboard_outbox_pending_messages",
    "Outbound messages waiting to be delivered",
    () => sources.outboxPending().length,
  );
  readGauge(
    registry,
    "switchboard_outbox_oldest_age_seconds",
    "Age of the oldest outbound message still waiting (0 when none waits)",
    () => {
      const oldest = Math.min(...sources.outboxPending().map((item) => item.createdAt));
      return Number.isFinite(oldest) ? Math.max(0, (sources.now() - oldest) / 1000) : 0;
    },
  );
  readGauge(registry, "switchboard_inbox_pending_messages", "Inbound messages stored and not handled yet", () =>
    sources.inboxPending(),
  );
  readGauge(registry, "switchboard_lane_waiting_turns", "Work waiting behind a running turn of the same session", () =>
    sources.lanes().reduce((sum, lane) => sum + lane.queued, 0),
  );
  readGauge(registry, "switchboard_lanes_busy", "Sessions with a turn running", () =>
    sources.lanes().reduce((sum, lane) => sum + (lane.running ? 1 : 0), 0),
  );
  readGauge(
    registry,
    "switchboard_chat_turn_slots_in_use",
    "Chat-turn slots held (256 at most by default)",
    () => sources.chatSlots().held,
  );
  readGauge(
    registry,
    "switchboard_chat_turn_slots_waiting",
    "Chat turns waiting for a free slot",
    () => sources.chatSlots().waiting,
  );
  registerStateGauges(registry, sources);
}

/** The gauges by state: MCP servers and channel accounts. */
function registerStateGauges(registry: Registry, sources: GaugeSources): void {
  new Gauge({
    name: "switchboard_mcp_servers",
    help: "Configured MCP servers by state (connecting, connected, failed, closed)",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      const servers = sources.mcp();
      for (const state of MCP_STATES) this.set({ state }, servers.filter((s) => s.state === state).length);
    },
  });
  new Gauge({
    name: "switchboard_channel_account_connected",
    help: "1 while a channel account is connected (or, for channels that do not report it, running), else 0",
    labelNames: ["channel", "account"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const account of sources.accounts())
        this.set({ channel: account.channel, account: account.accountId }, account.connected ? 1 : 0);
    },
  });
}
