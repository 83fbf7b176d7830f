// Messages typed on this page, on their way to the gateway: kept in sessionStorage until sent, sent
// again with the same idempotency key after a reconnect (the gateway drops repeats), and watched
// until their run ends (agent.wait), so a missed event never leaves one marked as pending.

const OUTBOX_KEY = "switchboard.outbox";

/** Run states after which a run changes no more. */
export const FINAL = new Set(["ok", "error", "timeout", "aborted"]);

/** A typed message's run ended; one stopped before it began was dropped, and stays on screen marked so. */
export function settle(state, item, run) {
  if (run.status === "aborted" && run.startedAt === undefined) state.dropped.set(item.id, item);
  item.done = true;
}

/** The typed messages of `state.pending`: `render` shows them, `refreshSoon` reads the history again. */
export function createTypedMessages({ state, call, render, refreshSoon }) {
  function save() {
    const waiting = [...state.pending.values()].filter((p) => p.status === "offline" || p.status === "sending");
    sessionStorage.setItem(OUTBOX_KEY, JSON.stringify(waiting.map(({ id, key, text }) => ({ id, key, text }))));
  }

  /** Waits (in the background) for a run to end, then marks its message done and refreshes the history. */
  function watchRun(runId, item) {
    call("agent.wait", { runId, timeoutMs: 600_000 })
      .then((run) => {
        if (FINAL.has(run.status)) settle(state, item, run);
        refreshSoon();
      })
      .catch(() => undefined); // disconnected or an unknown run: the reconnect sends and watches again
  }

  function accepted(item, result) {
    if (result.status === "started") {
      item.runId = result.runId;
      item.acceptedAt = Date.now();
      if (state.ended.has(result.runId)) item.done = true;
      else if (item.status === "sending") item.status = "queued";
    } else item.done = true;
    if (item.done) refreshSoon();
    // Events can be missed around a reconnect: ask the gateway when this run ends, then look again.
    if (result.status === "started" || result.status === "duplicate") watchRun(result.runId, item);
  }

  /** Sends one typed message; one the connection lost is sent again on reconnect with the same key. */
  async function deliver(item) {
    item.status = "sending";
    save();
    render();
    try {
      accepted(item, await call("chat.send", { sessionKey: item.key, message: item.text, idempotencyKey: item.id }));
    } catch (err) {
      if (err.disconnected) item.status = "offline";
      else Object.assign(item, { status: "failed", error: err.message });
    }
    save();
    render();
  }

  return {
    save,
    deliver,
    /** Messages a closed tab left unsent, sent once the gateway answers. */
    restore() {
      try {
        for (const { id, key, text } of JSON.parse(sessionStorage.getItem(OUTBOX_KEY) ?? "[]"))
          state.pending.set(id, { id, key, text, status: "offline" });
      } catch {
        sessionStorage.removeItem(OUTBOX_KEY);
      }
    },
    /** Sends everything the connection lost. */
    async resend() {
      for (const item of state.pending.values()) if (item.status === "offline") await deliver(item);
    },
  };
}
