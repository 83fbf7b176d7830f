// The session panel beside the conversation: the session's facts, runs, sub-agents and deliveries
// (sessions.get), and its buttons (/send, /compact, reset). Reading it also settles typed messages
// whose run ended while this page was disconnected: that end event reached nobody.

import { renderPanel } from "./panel.js";

const $ = (id) => document.getElementById(id);

/** Typed messages and running marks of runs the panel no longer lists as active. */
function settleFromPanel(state, info, asked, refreshSoon) {
  const active = new Set(info.activeRuns.map((run) => run.runId));
  for (const item of state.pending.values())
    if (item.runId && item.acceptedAt < asked && !active.has(item.runId) && !item.done) {
      item.done = true;
      state.running.delete(item.runId);
      refreshSoon();
    }
  for (const [runId, since] of state.running) if (since < asked && !active.has(runId)) state.running.delete(runId);
  for (const run of info.activeRuns) if (!state.running.has(run.runId)) state.running.set(run.runId, asked);
}

/** Wires the panel's buttons: `/send on|off|inherit`, `/compact` (typed like any message) and the confirmed reset. */
function wireButtons(elements, { state, call, send, refreshSoon, showError }) {
  for (const button of elements.sendButtons) button.onclick = () => send(`/send ${button.dataset.send}`);
  $("compact").onclick = () => send("/compact");
  $("reset").onclick = () => {
    $("reset-confirm").hidden = false;
    $("reset-confirm").focus();
  };
  $("reset-confirm").onclick = async () => {
    $("reset-confirm").hidden = true;
    await call("sessions.reset", { key: state.key }).catch(showError);
    state.older = [];
    refreshSoon();
  };
}

/** The panel of the open session; `refresh()` reads it again (and again every 2 s while a sub-agent is unfinished). */
export function createSessionPanel(deps) {
  const { state, call, renderPending, refreshSoon, showError } = deps;
  const elements = {
    facts: $("panel-facts"),
    sendEffective: $("send-effective"),
    sendButtons: [...document.querySelectorAll("[data-send]")],
    subagents: $("subagents"),
    pendingDeliveries: $("pending-deliveries"),
    failures: $("failures"),
  };
  wireButtons(elements, deps);
  let timer;
  async function refresh() {
    clearTimeout(timer);
    const asked = Date.now();
    const info = await call("sessions.get", { key: state.key });
    if (info.key !== state.key) return;
    settleFromPanel(state, info, asked, refreshSoon);
    // Sub-agents run in their own sessions, whose events this page does not receive: look again while one is unfinished.
    if (info.subagents.some((s) => s.state === "running" || s.state === "ended"))
      timer = setTimeout(() => refresh().catch(showError), 2_000);
    renderPending();
    renderPanel(elements, info, {
      onStopSubagent: (runId) =>
        call("subagents.stop", { sessionKey: state.key, runId }).then(refresh).catch(showError),
    });
  }
  return { refresh };
}
