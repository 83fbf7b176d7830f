import path from "node:path";
import type { Config } from "../config/schema/index.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import { type DeliveryGateDeps, createDeliveryGate, createOutbox } from "../delivery/index.js";
import type { Deliver } from "../delivery/delivery-request.js";
import { resolveSharedSettings } from "../delivery/account-settings.js";
import type { Logger } from "../logger.js";
import { DEFAULT_ACCOUNT_ID } from "../routing/normalize.js";
import type { StatePort } from "../state/state-port.js";

/** What the gateway's way out is made of. */
export interface CoreDeliveryDeps {
  config: Config;
  state: StatePort;
  stateDir: string;
  adapters: Map<string, ChannelAdapter>;
  logger: Logger;
  now: () => number;
  retry?: DeliveryGateDeps["retry"] | undefined;
  observe?: DeliveryGateDeps["observe"];
  /** the owner's check before every platform send (./core-cluster.ts) */
  mayStillSend?: DeliveryGateDeps["mayStillSend"];
  /** the owner's lane claims before every chunk (./owner-lane-claims.ts) */
  holdsLane?: DeliveryGateDeps["holdsLane"];
  /** told when a lane's queue emptied (many mode releases its claim, ./many-cluster.ts) */
  laneEmptied?: DeliveryGateDeps["laneEmptied"];
}

/**
 * The gateway's one way out: the durable outbox and the delivery gate in front of it. Every reply,
 * notice and announce, the web and terminal chat's included, leaves through `deliver`.
 */
export async function openCoreDelivery(deps: CoreDeliveryDeps) {
  const { config, adapters } = deps;
  const outbox = await createOutbox({
    state: deps.state,
    path: path.join(deps.stateDir, "outbox.json"),
    now: deps.now,
  });
  const gate = createDeliveryGate({
    adapters: (channel) => adapters.get(channel),
    outbox,
    policy: () => config.session.sendPolicy,
    // Each account's own `retry` setting; the web chat has no config section and gets the default.
    retryFor: (target) => resolveSharedSettings(config, target.channel, target.accountId ?? DEFAULT_ACCOUNT_ID).retry,
    logger: deps.logger,
    now: deps.now,
    ...(deps.retry && { retry: deps.retry }),
    ...(deps.observe && { observe: deps.observe }),
    ...(deps.mayStillSend && { mayStillSend: deps.mayStillSend }),
    ...(deps.holdsLane && { holdsLane: deps.holdsLane }),
    ...(deps.laneEmptied && { laneEmptied: deps.laneEmptied }),
  });
  const deliver: Deliver = (request) => gate.deliver(request);
  return { outbox, gate, deliver };
}
