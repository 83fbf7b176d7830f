/** The parts of the gateway core whose quiet {@link coreIdle} waits for. */
interface IdleParts {
  lanes: { idle(): Promise<void>; stats(): unknown[] };
  /** turns hooks, gateway clients and tools started, until they handed over their reply or announce */
  turns: { idle(): Promise<void> };
  gate: { idle(): Promise<void> };
  outbox: { pending(): unknown[] };
  /** messages stored and not finished (still in access, a command or the session's mutex before their lane) */
  inbox: { pending(): unknown[] };
  /** the stores' port: idle also means every change made so far is durable (a test reads the rows next) */
  state: { flush(): Promise<void> };
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The core's idle signal (`core.idle()`): settles once every stored message is finished (and every
 * change so far is durable), no turn
 * runs or waits in a lane, no stored
 * turn (hook, `agent` call, tool) is left, no send is in flight and the outbox is drained (an item waiting for a retry is
 * waited for; with an injected clock, advance it). Tests wait on it instead of sleeping to show
 * that nothing more happens. It checks again after each wait because each part can wake another:
 * a turn hands a reply to the gate, a settled send starts its lane's next item.
 */
export function coreIdle(parts: IdleParts): () => Promise<void> {
  const quiet = () =>
    parts.inbox.pending().length === 0 && parts.lanes.stats().length === 0 && parts.outbox.pending().length === 0;
  return async () => {
    for (let round = 0; ; round++) {
      await parts.lanes.idle();
      await parts.turns.idle();
      await parts.gate.idle();
      // The first check waits one turn of the event loop, for a settled send's follow-up to start;
      // after that an item waits for its retry timer, so poll instead of spinning.
      await wait(round === 0 ? 0 : 10);
      if (!quiet()) continue;
      // A finished message's "done" (and the rest of its last step) may still be on its way to
      // storage: idle means it is there, so a reader of the rows after idle sees the final state.
      await parts.state.flush();
      if (quiet()) return;
    }
  };
}
