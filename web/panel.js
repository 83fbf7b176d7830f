// The session panel: model, tokens and context, send policy, sub-agents, replies waiting to be
// delivered and delivery failures,
// from sessions.get.
import { ago } from "./sessions.js";

const SEND_MODE_OF = { allow: "on", deny: "off", inherit: "inherit" };

function fact(list, term, value) {
  const dt = document.createElement("dt");
  dt.textContent = term;
  const dd = document.createElement("dd");
  dd.textContent = value;
  list.append(dt, dd);
}

const tokens = (n) => (n >= 10_000 ? `${Math.round(n / 1000)}k` : String(n ?? 0));

/** Renders one `sessions.get` answer; `onStopSubagent(runId)` for a running sub-agent's Stop button. */
export function renderPanel(elements, info, { onStopSubagent }) {
  const { facts, sendEffective, sendButtons, subagents, pendingDeliveries, failures } = elements;
  facts.replaceChildren();
  const s = info.session;
  fact(facts, "Key", info.key);
  fact(facts, "Kind", info.kind);
  fact(facts, "Model", info.model);
  fact(facts, "Tokens", s ? `${tokens(s.inputTokens)} in / ${tokens(s.outputTokens)} out (last turn)` : "none yet");
  // The gateway's estimate, the one /status shows (estimateContext), written the same way.
  fact(facts, "Context", info.context?.text ?? `? of ${tokens(info.contextWindow)} tokens`);
  fact(facts, "Compactions", String(s?.compactionCount ?? 0));
  fact(facts, "Last activity", s ? ago(s.updatedAt) : "never");
  const running = info.busy || info.activeRuns.length > 0;
  fact(facts, "Queue", running ? `a turn is running, ${info.queued} waiting` : "idle");

  const mode = SEND_MODE_OF[info.sendPolicy.override];
  sendEffective.textContent = `Delivery is ${info.sendPolicy.effective === "allow" ? "on" : "off"} (${
    mode === "inherit" ? "inherited from session.sendPolicy" : "set for this session"
  }).`;
  for (const button of sendButtons) button.setAttribute("aria-pressed", String(button.dataset.send === mode));

  subagents.replaceChildren();
  for (const sub of info.subagents) {
    const item = document.createElement("li");
    const label = document.createElement("span");
    label.textContent = `${sub.label ?? sub.task.slice(0, 40)} · ${sub.state}${sub.outcome ? ` (${sub.outcome})` : ""}`;
    item.append(label);
    if (sub.state === "running") {
      const stop = document.createElement("button");
      stop.type = "button";
      stop.textContent = "Stop";
      stop.setAttribute("aria-label", `Stop sub-agent ${sub.label ?? sub.runId}`);
      stop.onclick = () => onStopSubagent(sub.runId);
      item.append(stop);
    }
    subagents.append(item);
  }
  if (info.subagents.length === 0)
    subagents.append(Object.assign(document.createElement("li"), { textContent: "none" }));

  // Replies the outbox keeps retrying (the platform is down, say): they go out once it is back.
  pendingDeliveries.replaceChildren();
  for (const p of info.pending ?? []) {
    const item = document.createElement("li");
    const tries = p.attempts ? `${p.attempts} failed ${p.attempts === 1 ? "try" : "tries"}, retrying` : "sending";
    item.textContent = `${p.kind} to ${p.channel}:${p.to ?? "?"} since ${ago(p.since)}: ${tries}${p.error ? ` (${p.error})` : ""}`;
    pendingDeliveries.append(item);
  }
  if (!info.pending?.length)
    pendingDeliveries.append(Object.assign(document.createElement("li"), { textContent: "none" }));

  failures.replaceChildren();
  for (const f of info.failures) {
    const item = document.createElement("li");
    item.textContent = `${ago(f.at)}: ${f.kind} to ${f.channel}:${f.to ?? "?"}: ${f.error}`;
    failures.append(item);
  }
  if (info.failures.length === 0) failures.append(Object.assign(document.createElement("li"), { textContent: "none" }));
}
