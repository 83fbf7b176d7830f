// Events of the open session (docs/gateway.md): `agent` moves a run through queued, running and its
// end (marks on typed messages, the running indicator, a notice when it failed or was stopped);
// `chat.delivery` brings every reply, notice and announce. Any event makes the page read the history again.

import { FINAL, settle } from "./typed-messages.js";

/** What a stop did, as the notice says it: /stop's reply says the same on every channel. */
export function stoppedText(state) {
  const n = state.droppedByStop;
  return `The run was stopped.${n ? ` Dropped ${n} queued message${n === 1 ? "" : "s"}: not answered.` : ""}`;
}

/** A run's move: its typed message's mark, the running set, and a notice when it ended other than ok. */
function onRun(state, run, notice) {
  const item = [...state.pending.values()].find((p) => p.runId === run.runId || p.id === run.runId);
  if (FINAL.has(run.status)) {
    state.running.delete(run.runId);
    state.ended.add(run.runId);
    if (item) settle(state, item, run);
    if (run.status === "aborted") notice(stoppedText(state));
    else if (run.status !== "ok") notice(`The run ${run.status}${run.error ? `: ${run.error}` : "."}`);
  } else {
    state.running.set(run.runId, Date.now());
    if (item) item.status = run.status === "running" ? "running" : "queued";
  }
}

/** Returns the page's event handler: `notice` shows a line, `renderPending` the typed messages, `refreshSoon` reads the history. */
export function createSessionEvents({ state, notice, renderPending, refreshSoon }) {
  return function onEvent(name, payload) {
    if (!payload || payload.sessionKey !== state.key) return;
    if (name === "agent") {
      onRun(state, payload, notice);
      renderPending();
    }
    // A reply is shown by the history it is written to; notices and announces live until the history shows them.
    if (name === "chat.delivery" && payload.kind !== "reply")
      state.live.push({ id: payload.messageId, text: payload.text });
    refreshSoon();
  };
}
