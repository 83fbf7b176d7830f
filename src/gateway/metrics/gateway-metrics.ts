import { Registry } from "prom-client";
import { createActivityRing } from "./activity-ring.js";
import { type GaugeSources, registerGauges } from "./metric-gauges.js";
import { registerProcessMetrics } from "./process-metrics.js";
import { tallyCounter, tallyHistogram } from "./tally.js";

/** What became of one inbound message, as counted: a turn, a command, or nothing. */
export type InboundOutcome = "turn" | "command" | "ignored" | "duplicate" | "forwarded" | "stored" | "failed";

/** What became of one outbound message (or one attempt of it, for `retried`). */
type DeliveryResultLabel = "sent" | "retried" | "failed" | "blocked";

/** One delivery outcome, as the gate and the item sender report it. */
interface DeliveryOutcome {
  channel: string;
  accountId?: string | undefined;
  result: DeliveryResultLabel;
  /** the failure's stable reason (`rate_limited`, `no_adapter`, ...); `sendPolicy` for blocked ones */
  reason?: string | undefined;
}

// Seconds; chat turns run from tens of milliseconds (offline) to minutes (a model with tools).
const TURN_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
// Seconds; one journal batch is one write and one fdatasync.
const SYNC_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** The counters and histograms of the message path, on `registry` (rendered when scraped, tally.ts). */
function messageFamilies(registry: Registry) {
  const counter = <T extends string>(name: string, help: string, labelNames: readonly T[]) =>
    tallyCounter(registry, { name, help, labelNames });
  return {
    inbound: counter(
      "switchboard_inbound_messages_total",
      "Inbound messages stored, by channel, account and outcome (turn, command, ignored, duplicate, forwarded, stored, failed)",
      ["channel", "account", "outcome"],
    ),
    lost: counter(
      "switchboard_inbound_lost_messages_total",
      "Inbound messages a platform delivered that were never stored and will not be replayed (Discord: its freeze bound passed), by channel and account",
      ["channel", "account"],
    ),
    turns: counter(
      "switchboard_turns_total",
      "Agent turns answering inbound messages, by channel, agent and outcome (ok, error, timeout, aborted)",
      ["channel", "agent", "outcome"],
    ),
    turnSeconds: tallyHistogram(registry, {
      name: "switchboard_turn_duration_seconds",
      help: "From an inbound message stored to its turn's end, its reply handed to the platform (or queued for retry)",
      labelNames: ["channel", "outcome"],
      buckets: TURN_BUCKETS,
    }),
    deliveries: counter(
      "switchboard_deliveries_total",
      "Outbound messages by channel, account and result (sent, retried: one failed attempt that will be retried, failed, blocked by sendPolicy) with the failure's reason",
      ["channel", "account", "result", "reason"],
    ),
    journal: tallyHistogram(registry, {
      name: "switchboard_journal_sync_duration_seconds",
      help: "One group commit of the state journal: the batch's write and its fdatasync",
      labelNames: [],
      buckets: SYNC_BUCKETS,
    }).labels({}),
  };
}

/** A model's calls as counted: latency by outcome, tokens by direction. */
interface ModelCalls {
  /** one call; tokens as the provider reported them */
  observe(outcome: "ok" | "error", seconds: number, used?: Tokens): void;
}

/** The model families on `registry`, and each model's series made at its first call and kept. */
function modelFamilies(registry: Registry): (ref: { provider: string; model: string }) => ModelCalls {
  const seconds = tallyHistogram(registry, {
    name: "switchboard_model_call_duration_seconds",
    help: "One model call (one step of a turn), by provider, model and outcome (ok, error)",
    labelNames: ["provider", "model", "outcome"],
    buckets: TURN_BUCKETS,
  });
  const tokens = tallyCounter(registry, {
    name: "switchboard_model_tokens_total",
    help: "Tokens the models reported, by provider, model and direction (input, output)",
    labelNames: ["provider", "model", "direction"],
  });
  const kept = new Map<string, ModelCalls>();
  return ({ provider, model }) => {
    const key = `${provider}/${model}`;
    let calls = kept.get(key);
    if (!calls) {
      const at = {
        ok: seconds.labels({ provider, model, outcome: "ok" }),
        error: seconds.labels({ provider, model, outcome: "error" }),
      };
      const input = tokens.labels({ provider, model, direction: "input" });
      const output = tokens.labels({ provider, model, direction: "output" });
      calls = {
        observe(outcome, took, used) {
          at[outcome].observe(took);
          if (used?.input) input.inc(used.input);
          if (used?.output) output.inc(used.output);
        },
      };
      kept.set(key, calls);
    }
    return calls;
  };
}

/** What the message path records: each inbound message, turn, delivery and journal sync. */
function messageRecorders(registry: Registry, activity: ReturnType<typeof createActivityRing>) {
  const { inbound, lost, turns, turnSeconds, deliveries, journal } = messageFamilies(registry);
  return {
    /** One inbound message stored and handled. */
    inbound(channel: string, account: string, outcome: InboundOutcome): void {
      inbound.labels({ channel, account, outcome }).inc();
      activity.message();
    },
    /** `count` inbound messages of one account never stored, given up for good. */
    inboundLost(channel: string, account: string, count: number): void {
      lost.labels({ channel, account }).inc(count);
    },
    /** One turn that answered an inbound message ended; `seconds` since the message was stored. */
    turn(labels: { channel: string; agent: string; outcome: string }, seconds: number): void {
      turns.labels(labels).inc();
      turnSeconds.labels({ channel: labels.channel, outcome: labels.outcome }).observe(seconds);
      activity.turn();
    },
    /** One delivery outcome (see {@link DeliveryOutcome}). */
    delivery(outcome: DeliveryOutcome): void {
      const { channel, result } = outcome;
      deliveries
        .labels({ channel, account: outcome.accountId ?? "default", result, reason: outcome.reason ?? "" })
        .inc();
    },
    /** One journal batch written and synced. */
    journalSync(seconds: number): void {
      journal.observe(seconds);
    },
  };
}

/**
 * The gateway's metrics: one prom-client {@link Registry} made here (never the library's global
 * one), the process metrics (started once per process, process-metrics.ts), the gateway's counters
 * and histograms, gauges read at scrape time, and a per-minute activity ring for the control UI's
 * Health view. Label values are bounded: channel, account, agent, outcome, provider/model, reason;
 * never a session key, user id or text. Callers keep the series of labels that do not change.
 */
export function createGatewayMetrics(options: { now?: () => number } = {}) {
  const registry = new Registry();
  registerProcessMetrics(registry);
  const activity = createActivityRing(options.now ?? Date.now);
  return {
    registry,
    /** Serves gauges from the running core (outbox, inbox, lanes, slots, MCP, channel accounts); read at scrape time. */
    watch(sources: GaugeSources): void {
      registerGauges(registry, sources);
    },
    ...messageRecorders(registry, activity),
    /** A model's calls (`provider/model`), made once per model: keep it for the model's calls. */
    modelCalls: modelFamilies(registry),
    /** Messages and turns per minute over the last hour, oldest first (the control UI's chart). */
    activity: () => activity.series(),
    /** The Prometheus text exposition of every metric. */
    scrape: (): Promise<string> => registry.metrics(),
    contentType: registry.contentType,
  };
}

/** Tokens of one model call. */
interface Tokens {
  input?: number | undefined;
  output?: number | undefined;
}

/** The gateway's metrics sink (see {@link createGatewayMetrics}). */
export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;
