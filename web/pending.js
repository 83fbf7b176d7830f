// Messages typed in this tab and not answered yet: a bubble below the history while the history
// lacks them, the status on the history's own bubble once their turn wrote it there (never shown
// twice), and messages a stop dropped before their turn, until dismissed.

const PENDING_TEXT = {
  sending: "sending…",
  queued: "queued: waits for the turn before it",
  running: "the agent is working on it…",
  offline: "not sent yet: waiting for the gateway; sent when it is back",
  dropped: "dropped by Stop before its turn began: not answered",
};

function markStatus(node, status, text) {
  node.classList.add("pending");
  node.dataset.status = status;
  node.append(Object.assign(document.createElement("span"), { className: "state", textContent: text }));
}

/** A message not (or not yet) in the history, with its status; `dismiss` gives it a Dismiss button. */
function pendingNode(item, status, text, dismiss) {
  const node = document.createElement("div");
  node.className = `msg user${status === "failed" || status === "dropped" ? ` ${status}` : ""}`;
  node.append(document.createTextNode(item.text));
  markStatus(node, status, text);
  if (dismiss) {
    const button = Object.assign(document.createElement("button"), { type: "button", textContent: "Dismiss" });
    button.onclick = dismiss;
    node.append(button);
  }
  return node;
}

/** The history's bubble of a typed message, once its turn wrote it there (render.js tags it with the run). */
function writtenNode(messages, item) {
  return messages.querySelector(`.msg.user[data-run-id="${CSS.escape(item.runId ?? item.id)}"]`);
}

/**
 * Shows `state.pending` and `state.dropped` of the open session in `elements` (messages, pending,
 * log, activity), and the running indicator; `onDismiss` runs after a Dismiss button removed one.
 */
export function showPending(state, elements, onDismiss) {
  const { messages, pending, log, activity } = elements;
  for (const node of messages.querySelectorAll(".msg.user.pending")) {
    node.classList.remove("pending");
    delete node.dataset.status;
    node.querySelector(".state:not(.withheld)")?.remove();
  }
  const dismissing = (list, id) => () => {
    list.delete(id);
    onDismiss();
  };
  const nodes = [];
  for (const item of state.pending.values()) {
    if (item.key !== state.key || state.dropped.has(item.id)) continue;
    const failed = item.status === "failed";
    const text = failed ? `not sent: ${item.error}` : PENDING_TEXT[item.status];
    const written = writtenNode(messages, item);
    // A finished one stays below the history until the history shows it (never gone in between).
    if (item.done) {
      if (!written) nodes.push(pendingNode(item, item.status, text));
    } else if (written) markStatus(written, item.status, text);
    else nodes.push(pendingNode(item, item.status, text, failed && dismissing(state.pending, item.id)));
  }
  for (const item of state.dropped.values())
    if (item.key === state.key)
      nodes.push(pendingNode(item, "dropped", PENDING_TEXT.dropped, dismissing(state.dropped, item.id)));
  pending.replaceChildren(...nodes);
  if (nodes.length) log.scrollTop = log.scrollHeight;
  const busy = state.running.size > 0;
  activity.hidden = !busy;
  log.setAttribute("aria-busy", String(busy));
}
