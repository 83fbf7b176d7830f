import { performance } from "node:perf_hooks";
import type { InboundResult, createInboundPipeline } from "../../inbound/handle-inbound.js";
import type { GatewayMetrics, InboundOutcome } from "./gateway-metrics.js";

type Pipeline = ReturnType<typeof createInboundPipeline>;

const OUTCOME_OF: Record<InboundResult["status"], InboundOutcome> = {
  queued: "turn",
  command: "command",
  ignored: "ignored",
  duplicate: "duplicate",
  forwarded: "forwarded",
  stored: "stored",
};

/** The labels of a message `accept` has validated (the schema's default account when it named none). */
function labelsOf(raw: unknown): { channel: string; account: string } {
  const message = raw as { channel: string; accountId?: string };
  return { channel: message.channel, account: message.accountId ?? "default" };
}

/**
 * The pipeline with every stored message counted by outcome and every turn it starts timed from
 * the moment the message was stored to the turn's end (by then its reply was handed to the
 * platform, or queued for a retry). Counting hangs off promises the pipeline already makes, so the
 * message's own path gains one clock read.
 */
export function observePipeline(
  pipeline: Pipeline,
  metrics: GatewayMetrics,
  agentOf: (sessionKey: string) => string,
): Pipeline {
  async function accept(...args: Parameters<Pipeline["accept"]>): ReturnType<Pipeline["accept"]> {
    const accepted = await pipeline.accept(...args);
    const storedAt = performance.now();
    const { channel, account } = labelsOf(args[0]);
    accepted.result.then(
      (result) => {
        metrics.inbound(channel, account, OUTCOME_OF[result.status]);
        if (result.status !== "queued") return;
        void result.done.then((run) =>
          metrics.turn(
            { channel, agent: agentOf(run.sessionKey), outcome: run.status },
            (performance.now() - storedAt) / 1000,
          ),
        );
      },
      () => metrics.inbound(channel, account, "failed"),
    );
    return accepted;
  }
  return {
    ...pipeline,
    accept,
    handleInbound: async (...args: Parameters<Pipeline["handleInbound"]>) => (await accept(...args)).result,
  };
}
