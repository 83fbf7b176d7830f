// A standby serves the hooks itself (docs/scale-out.md "Inbound anywhere"): `POST <hooks.path>/agent`
// and `/wake` are checked as the owner checks them (the same handler, from the same config) and
// stored in the hand-off inbox for the owner, so a hook is answered 202 at once even while the
// owner is paused or dead and not yet taken over. Platform webhooks an adapter serves on a standby
// (Telegram's) are stored there the same way. Everything else goes to the front it wraps (the relay).
import type { ResolvedModel } from "../agents/models/index.js";
import type { Config } from "../config/schema/index.js";
import { storeHandoff } from "../cluster/handoff-sql.js";
import { postgresHookAuthLimiter } from "../cluster/hook-auth-sql.js";
import type { ChannelAdapter, HandOff } from "../delivery/channel-adapter.js";
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

/** Stores one platform event of `channel` in the hand-off inbox (kind `<channel>-update`); throws while not joined. */
function handOffOf(target: HandoffTarget, channel: string): HandOff {
  return async ({ accountId, dedupeKey, payload }) => {
    const joined = target.joined();
    if (!joined) throw new Error("this gateway has not joined its cluster yet");
    const row = {
      kind: `${channel}-update` as const,
      account: accountId,
      dedupeKey,
      payload,
      receivedBy: target.nodeId,
    };
    await storeHandoff(joined.pool, joined.schema, row);
  };
}

/** The platform webhooks a standby serves itself (Telegram's); an adapter whose accounts cannot be read is left to the relay. */
async function standbyWebhooks(deps: StandbyHooksDeps) {
  const routes = await Promise.all(
    (deps.adapters ?? []).map((adapter) =>
      adapter.standbyWebhook?.(handOffOf(deps.target, adapter.id)).catch((err: unknown) => {
        deps.logger.warn({ channel: adapter.id, err }, "webhook not served by this standby; relayed to the owner");
        return undefined;
      }),
    ),
  );
  return routes.filter((route) => route !== undefined);
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
    // The owner's lockout, in the schema (one for the cluster): a client locked out here is locked out everywhere.
    authLimiter: postgresHookAuthLimiter(() => deps.target.joined()?.pool),
  });
  const webhooks = standbyWebhooks(deps);
  return (context) => {
    const front = inner(context);
    return {
      async handleHttp(req, res) {
        const url = new URL(req.url ?? "/", "http://gateway");
        // The owner's hooks rule: browsers refused before the token counts, no Host check.
        if (await hooks.handle(req, res, url)) return;
        for (const route of await webhooks) if (await route(req, res)) return;
        await front.handleHttp(req, res);
      },
      handleUpgrade: (req, socket, head) => front.handleUpgrade(req, socket, head),
      close: () => front.close(),
    };
  };
}
