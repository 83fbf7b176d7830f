import type { ChannelConfigDefinition, SharedAccountSettings } from "../config/channel-table.js";
import type { Logger } from "../logger.js";
import { normalizeAccountId } from "../routing/normalize.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import { channelAccountIds, resolveAccountSettings } from "./account-settings.js";
import type {
  AccountHealth,
  AdapterStartContext,
  ChannelAdapter,
  ChannelCapabilities,
  InboundSink,
  OutboundMessage,
  TargetCodec,
} from "./channel-adapter.js";
import { runningAccount, stopRunningAccounts } from "./running-account.js";

/** One started account: it knows its id and how to stop. */
interface RunningAccount {
  account: { accountId: string };
  stop(): Promise<void>;
  /** whether it can reach its platform now (absent: it can); a receiving account started during an outage says why not */
  health?(): Pick<AccountHealth, "connected" | "lastError">;
}

/** What one platform brings to {@link createAccountAdapter}: how to run one account and send on it. */
export interface AccountAdapterSpec<
  Settings extends SharedAccountSettings,
  Account extends { accountId: string },
  Running,
> {
  /** the channel's definition: its id, and the defaults its accounts' settings are completed from */
  channel: Pick<ChannelConfigDefinition<Settings>, "id" | "defaults" | "perAccountFields">;
  /** `channels.<id>` as validated */
  section: object;
  /** the platform's name in errors and logs, e.g. "Telegram" */
  name: string;
  /** every capability but the limits, which come from the accounts' settings */
  capabilities: Omit<ChannelCapabilities, "maxTextLength" | "maxLinesPerMessage">;
  /** one account's limits; the adapter declares the tightest of all its accounts */
  limits(settings: Settings): { maxTextLength: number; maxLinesPerMessage?: number };
  targets: TargetCodec;
  logger: Logger;
  /** the accounts to run, resolved at each start (tokens and credentials are read then) */
  accounts(): Account[] | Promise<Account[]>;
  /** connects one account; a throw stops the accounts already started and fails the start */
  startAccount(account: Account, sink: InboundSink, context: AdapterStartContext): Promise<Running>;
  send(running: Running, target: DeliveryContext, message: OutboundMessage): Promise<{ messageIds: string[] }>;
  /** what the "adapter started" log line says of one running account */
  describe(running: Running): unknown;
}

/** The adapter {@link createAccountAdapter} builds, with the running accounts the platform's extras use. */
export interface AccountAdapter<Running> {
  adapter: ChannelAdapter;
  /** the running account a target names (or the only one); the errors of `runningAccount` otherwise */
  accountFor(target: DeliveryContext): Running;
  /** the running accounts by normalized id */
  running: ReadonlyMap<string, Running>;
}

/** The tightest limits of all the section's accounts (configured or not, so a later start never exceeds them). */
function tightestLimits<Settings extends SharedAccountSettings>(
  spec: Pick<AccountAdapterSpec<Settings, { accountId: string }, unknown>, "channel" | "section" | "limits">,
): Pick<ChannelCapabilities, "maxTextLength" | "maxLinesPerMessage"> {
  const all = channelAccountIds(spec.section as { accounts?: Record<string, unknown> }).map((id) =>
    spec.limits(resolveAccountSettings(spec.channel, spec.section, id)),
  );
  const lines = all.flatMap((limits) => (limits.maxLinesPerMessage === undefined ? [] : [limits.maxLinesPerMessage]));
  return {
    maxTextLength: Math.min(...all.map((limits) => limits.maxTextLength)),
    ...(lines.length > 0 && { maxLinesPerMessage: Math.min(...lines) }),
  };
}

/**
 * A channel adapter that runs one platform connection per account: it owns the map of running
 * accounts, starts them all (a second start replaces them; one failure stops the rest), stops
 * them, routes each send to the target's account and declares the tightest limits of all accounts.
 * Started send-only (`context.receive` false) it takes no account lease and reports each running
 * account as send-only (`accountHealth`). An account that says whether it reached its platform
 * (`health`: started during an outage) is reported not connected, with why, until it has; then, as
 * any receiving account, it reports nothing (the gateway counts it connected while started). The platform supplies only how one account starts and sends.
 */
export function createAccountAdapter<
  Settings extends SharedAccountSettings,
  Account extends { accountId: string },
  Running extends RunningAccount,
>(spec: AccountAdapterSpec<Settings, Account, Running>): AccountAdapter<Running> {
  const running = new Map<string, Running>();
  const platform = { name: spec.name, channel: spec.channel.id };
  const accountFor = (target: DeliveryContext) => runningAccount(running, target, platform);
  let sendOnly = false;
  const adapter: ChannelAdapter = {
    id: spec.channel.id,
    capabilities: { ...spec.capabilities, ...tightestLimits(spec) },
    targets: spec.targets,
    async start(sink, context) {
      await stopRunningAccounts(running); // a second start replaces the accounts instead of running them twice
      sendOnly = context.receive === false;
      try {
        for (const account of await spec.accounts()) {
          // Send-only: the lease stays with the gateway that receives the account.
          if (!sendOnly) await context.holdAccount?.(account.accountId);
          const started = await spec.startAccount(account, sink, context);
          running.set(started.account.accountId, started);
        }
      } catch (err) {
        await stopRunningAccounts(running);
        throw err;
      }
      const accounts = [...running.values()].map(spec.describe);
      spec.logger.info({ accounts, ...(sendOnly && { sendOnly }) }, `${spec.channel.id} adapter started`);
    },
    stop: () => stopRunningAccounts(running),
    send: async (target, message) => spec.send(accountFor(target), target, message),
    accountHealth: (accountId) => {
      const started = running.get(normalizeAccountId(accountId));
      if (sendOnly) return started && { connected: true, ...started.health?.(), sendOnly: true };
      // Receiving: reported only while not connected (started during an outage); connected it says nothing, as before.
      const health = started?.health?.();
      return health?.connected === false ? health : undefined;
    },
  };
  return { adapter, accountFor, running };
}
