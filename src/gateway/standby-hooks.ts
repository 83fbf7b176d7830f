// A standby serves the hooks itself (docs/scale-out.md "Inbound anywhere"): `POST <hooks.path>/agent`
// and `/wake` are checked as the owner checks them (the same handler, from the same config) and
// stored in the hand-off inbox for the owner, so a hook is answered 202 at once even while the
// owner is paused or dead and not yet taken over. Everything else goes to the front it wraps (the relay).
import type { ResolvedModel } from "../agents/models/index.js";
import type { Config } from "../config/schema/index.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import { type HandoffTarget, handOffHookTurns } from "../hooks/hook-handoff.js";
import type { Logger } from "../logger.js";
import { channelsOf } from "./core-channels.js";
import { hooksFromConfig } from "./core-automation.js";
import { createCoreKeys } from "./core-keys.js";
import { createEventHub } from "./event-hub.js";
import type { StandbyFrontFactory } from "./standby-front.js";

/** What a standby's hooks are built from: what the owner's are, and where to hand the turns off. */
export interface StandbyHooksDeps {
  config: Config;
  /** the channel adapters (not started): their target codecs check a hook's `to` */
  adapters?: ChannelAdapter[];
  resolveModel: (ref: string) => ResolvedModel;
  target: HandoffTarget;
  logger: Logger;
  now?: () => number;
}

/** Wraps a standby's front: hook requests are served by the standby (stored for the owner), the rest by `inner`. */
export function withStandbyHooks(inner: StandbyFrontFactory, deps: StandbyHooksDeps): StandbyFrontFactory {
  const { targetsOf } = channelsOf({ events: createEventHub(), ...(deps.adapters && { adapters: deps.adapters }) });
  const hooks = hooksFromConfig(deps.config, {
    keys: createCoreKeys(deps.config),
    targetsOf,
    logger: deps.logger,
    now: deps.now ?? Date.now,
    startTurn: handOffHookTurns(deps.target),
    resolveModel: deps.resolveModel,
  });
  return (context) => {
    const front = inner(context);
    return {
      async handleHttp(req, res) {
        const url = new URL(req.url ?? "/", "http://gateway");
        if (!(await hooks.handle(req, res, url))) await front.handleHttp(req, res);
      },
      handleUpgrade: (req, socket, head) => front.handleUpgrade(req, socket, head),
      close: () => front.close(),
    };
  };
}
