import type { ResolvedModel } from "../../agents/models/index.js";
import type { AdapterStartContext } from "../../delivery/channel-adapter.js";
import type { DeliveryObserver } from "../../delivery/item-sender.js";
import type { createInboundPipeline } from "../../inbound/handle-inbound.js";
import type { GatewayMetrics } from "./gateway-metrics.js";
import type { GaugeSources } from "./metric-gauges.js";
import { observeModels } from "./observe-model.js";
import { observePipeline } from "./observe-pipeline.js";

type Pipeline = ReturnType<typeof createInboundPipeline>;

/**
 * Where the gateway core hands its parts to the metrics: each piece is the part unchanged (or no
 * option at all) when the gateway runs without metrics, so a core built in a unit test counts nothing.
 */
export function observeCore(metrics: GatewayMetrics | undefined) {
  const observe: DeliveryObserver | undefined =
    metrics &&
    ((target, result, reason) =>
      metrics.delivery({ channel: target.channel, accountId: target.accountId, result, reason }));
  return {
    /** `resolveModel` whose models are timed and their tokens counted */
    models: (resolve: (ref: string) => ResolvedModel) => (metrics ? observeModels(resolve, metrics) : resolve),
    /** the state port's option that times each journal sync */
    journal: metrics ? { onSync: metrics.journalSync } : {},
    /** the delivery gate's option that counts each message's outcome */
    deliveries: observe ? { observe } : {},
    /** the inbound pipeline with messages and turns counted */
    pipeline: (pipeline: Pipeline, agentOf: (sessionKey: string) => string): Pipeline =>
      metrics ? observePipeline(pipeline, metrics, agentOf) : pipeline,
    /** the part of `channel`'s adapter start context that counts the inbound messages it loses */
    adapterContext: (channel: string): Pick<AdapterStartContext, "inboundLost"> =>
      metrics ? { inboundLost: (accountId, count) => metrics.inboundLost(channel, accountId, count) } : {},
    /** serves the gauges from the running core */
    watch: (sources: GaugeSources): void => metrics?.watch(sources),
  };
}
