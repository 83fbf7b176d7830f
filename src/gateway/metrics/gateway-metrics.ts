import { Registry } from "prom-client";
import { createActivityRing } from "./activity-ring.js";
import { type GaugeSources, registerGauges } from "./metric-gauges.js";
import { registerProcessMetrics } from "./process-metrics.js";
import { type CounterSeries, type HistogramSeries, tallyCounter, tallyHistogram } from "./tally.js";

/** What became of one inbound message, as counted: a turn, a command, or nothing. */
export type InboundOutcome = "turn" | "command" | "ignored" | "duplicate" | "failed";

/** What became of one outbound message (or one attempt of it, for `retried`). */
type DeliveryResultLabel = "sent" | "retried" | "failed" | "blocked";

/** One delivery outcome, as the gate and the item sender report it. */
export interface DeliveryOutcome {
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

/**
 * The gateway's metrics: one prom-client {@link Registry} made here (never the library's global
 * one), the process metrics (started once per process, see process-metrics.ts), the gateway's counters and histograms, gauges read at scrape
 * time, and a per-minute activity ring for the control UI's Health view. Label values are bounded:
 * channel, account, agent, outcome, provider/model, reason; never a session key, user id or text.
 */
export function createGatewayMetrics(options: { now?: () => number } = {}) {
  const registry = new Registry();
  registerProcessMetrics(registry);
  // The message path counts in plain numbers; the registry renders them when scraped (tally.ts).
  const counter = <T extends string>(name: string, help: string, labelNames: readonly T[]) =>
    tallyCounter(registry, { name, help, labelNames });
  const histogram = <T extends string>(name: string, help: string, labelNames: readonly T[], buckets: number[]) =>
    tallyHistogram(registry, { name, help, labelNames, buckets });
  const inbound = counter(
    "switchboard_inbound_messages_total",
    "Inbound messages stored, by channel, account and outcome (turn, command, ignored, duplicate, failed)",
    ["channel", "account", "outcome"],
  );
  const turns = counter(
    "switchboard_turns_total",
    "Agent turns answering inbound messages, by channel, agent and outcome (ok, error, timeout, aborted)",
    ["channel", "agent", "outcome"],
  );
  const turnSeconds = histogram(
    "switchboard_turn_duration_seconds",
    "From an inbound message stored to its turn's end, its reply handed to the platform (or queued for retry)",
    ["channel", "outcome"],
    TURN_BUCKETS,
  );
  const modelSeconds = histogram(
    "switchboard_model_call_duration_seconds",
    "One model call (one step of a turn), by provider, model and outcome (ok, error)",
    ["provider", "model", "outcome"],
    TURN_BUCKETS,
  );
  const tokens = counter(
    "switchboard_model_tokens_total",
    "Tokens the models reported, by provider, model and direction (input, output)",
    ["provider", "model", "direction"],
  );
  const deliveries = counter(
    "switchboard_deliveries_total",
    "Outbound messages by channel, account and result (sent, retried: one failed attempt that will be retried, failed, blocked by sendPolicy) with the failure's reason",
    ["channel", "account", "result", "reason"],
  );
  const journalSeconds = histogram(
    "switchboard_journal_sync_duration_seconds",
    "One group commit of the state journal: the batch's write and its fdatasync",
    [],
    SYNC_BUCKETS,
  );
  const journal = journalSeconds.labels({});
  const activity = createActivityRing(options.now ?? Date.now);
  // One model's series, made at its first call and kept: a model call then looks nothing up.
  const modelSeries = new Map<string, ModelSeries>();
  const seriesOf = (provider: string, model: string): ModelSeries => {
    const key = `${provider}/${model}`;
    let series = modelSeries.get(key);
    if (!series) {
      const at = (outcome: string) => modelSeconds.labels({ provider, model, outcome });
      const tokensOf = (direction: string) => tokens.labels({ provider, model, direction });
      series = { ok: at("ok"), error: at("error"), input: tokensOf("input"), output: tokensOf("output") };
      modelSeries.set(key, series);
    }
    return series;
  };
  return {
    registry,
    /** Serves gauges from the running core (outbox, inbox, lanes, slots, MCP, channel accounts); read at scrape time. */
    watch(sources: GaugeSources): void {
      registerGauges(registry, sources);
    },
    /** One inbound message stored and handled. */
    inbound(channel: string, account: string, outcome: InboundOutcome): void {
      inbound.labels({ channel, account, outcome }).inc();
      activity.message();
    },
    /** One turn that answered an inbound message ended; `seconds` since the message was stored. */
    turn(labels: { channel: string; agent: string; outcome: string }, seconds: number): void {
      turns.labels(labels).inc();
      turnSeconds.labels({ channel: labels.channel, outcome: labels.outcome }).observe(seconds);
      activity.turn();
    },
    /** A model's call series (`provider/model`): its latency by outcome and its tokens; keep it for the model's calls. */
    modelCalls(ref: { provider: string; model: string }) {
      const series = seriesOf(ref.provider, ref.model);
      return {
        /** one call; tokens as the provider reported them */
        observe(outcome: "ok" | "error", seconds: number, used?: Tokens): void {
          series[outcome].observe(seconds);
          if (used?.input) series.input.inc(used.input);
          if (used?.output) series.output.inc(used.output);
        },
      };
    },
    /** One delivery outcome (see {@link DeliveryOutcome}). */
    delivery(outcome: DeliveryOutcome): void {
      deliveries
        .labels({
          channel: outcome.channel,
          account: outcome.accountId ?? "default",
          result: outcome.result,
          reason: outcome.reason ?? "",
        })
        .inc();
    },
    /** One journal batch written and synced. */
    journalSync(seconds: number): void {
      journal.observe(seconds);
    },
    /** Messages and turns per minute over the last hour, oldest first (the control UI's chart). */
    activity: () => activity.series(),
    /** The Prometheus text exposition of every metric. */
    scrape: (): Promise<string> => registry.metrics(),
    contentType: registry.contentType,
  };
}

/** One model's series: call latency by outcome, tokens by direction. */
interface ModelSeries {
  ok: HistogramSeries;
  error: HistogramSeries;
  input: CounterSeries;
  output: CounterSeries;
}

/** Tokens of one model call. */
interface Tokens {
  input?: number | undefined;
  output?: number | undefined;
}

/** The gateway's metrics sink (see {@link createGatewayMetrics}). */
export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;
