// The control UI: sessions, one conversation, the composer and the session panel, all through the
// gateway's WebSocket protocol (docs/gateway.md). What the conversation shows is the session's
// history (chat.history), fetched again whenever an event of the session arrives, so every tab on
// a session shows the same messages, and what was shown is still there after a reload.
import { createComposer } from "./composer.js";
import { createConnection } from "./connection.js";
import { createHealthView } from "./health.js";
import { renderPanel } from "./panel.js";
import { showPending } from "./pending.js";
import { bubble, renderMessages } from "./render.js";
import { createSessionList, sessionName } from "./sessions.js";

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = "switchboard.token";
const OUTBOX_KEY = "switchboard.outbox";
const DRAFT_KEY = "switchboard.draft";
const PAGE = 50;
const FINAL = new Set(["ok", "error", "timeout", "aborted"]);

const state = {
  key: "",
  sessionId: undefined,
  older: [],
  latest: [],
  cursor: undefined,
  hasMore: false,
  /** messages typed here and not yet in the history, by idempotency key */
  pending: new Map(),
  /** runs of the open session that have not ended, with when this page learnt of them */
  running: new Map(),
  /** runs that ended before chat.send answered */
  ended: new Set(),
  /** chat.delivery notices and announces the history does not show (yet) */
  live: [],
  /** typed messages a stop dropped before their turn began, by idempotency key: shown until dismissed */
  dropped: new Map(),
  /** how many queued messages the last Stop dropped (the gateway's count, from any client) */
  droppedByStop: 0,
  connected: false,
};

const titleOf = (row) => (sessionName(row) === row.key ? row.key : `${sessionName(row)} · ${row.key}`);
const wantedKey = () => decodeURIComponent(/^#\/session\/(.+)$/.exec(location.hash)?.[1] ?? "") || "main";
const newId = () => `ui-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

// ---- connection ------------------------------------------------------------------------------

let countdown;
function showConnection(s) {
  const conn = $("conn");
  conn.dataset.state = s.state;
  clearInterval(countdown);
  state.connected = s.state === "connected";
  $("input").disabled = !state.connected;
  $("send").disabled = !state.connected;
  $("auth").hidden = s.state !== "unauthorized";
  $("too-old").hidden = s.state !== "too-old";
  $("app").hidden = s.state === "unauthorized" || s.state === "too-old";
  if (s.state === "connected") {
    conn.textContent = "connected";
    notice("");
  } else if (s.state === "connecting") {
    conn.textContent = "connecting…";
  } else if (s.state === "reconnecting") {
    const due = Date.now() + (s.retryInMs ?? 0);
    const tick = () => {
      const secs = Math.max(0, Math.ceil((due - Date.now()) / 1000));
      conn.textContent = `reconnecting in ${secs}s`;
      notice(
        `Not connected to the gateway (retrying in ${secs}s, attempt ${s.attempt}). ` +
          "Your draft is kept; anything not yet sent is sent once the gateway is back.",
      );
    };
    tick();
    countdown = setInterval(tick, 1000);
  } else if (s.state === "unauthorized") {
    conn.textContent = "token needed";
    if (s.hadToken) localStorage.removeItem(TOKEN_KEY);
    $("auth-reason").textContent = s.hadToken
      ? "The gateway refused this token. Enter the gateway token."
      : "This gateway requires its token (gateway.auth.token or SWITCHBOARD_GATEWAY_TOKEN).";
    $("auth-token").focus();
  } else if (s.state === "too-old") {
    conn.textContent = "gateway too old";
    $("too-old-reason").textContent =
      `It lacks ${s.missing.join(", ")}. Update Switchboard and restart the gateway, then reload this page.`;
  }
  if (state.connected) onConnected().catch(showError);
  renderPending();
}

const connection = createConnection({
  url: `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}`,
  token: localStorage.getItem(TOKEN_KEY) ?? undefined,
  onState: showConnection,
  onEvent,
});
const call = (method, params) => connection.call(method, params);
const healthView = createHealthView({ root: $("health"), call, onError: showError });

/** `#/health` shows the Health view in place of the sessions; any other address is a session. */
function applyView() {
  const onHealth = location.hash === "#/health";
  document.body.dataset.view = onHealth ? "health" : "sessions";
  $("health-back").href = `#/session/${encodeURIComponent(state.key || "main")}`;
  if (onHealth && state.connected) healthView.show();
  else healthView.hide();
  return onHealth;
}

async function onConnected() {
  const [{ commands }, { agents }] = await Promise.all([call("commands.list"), call("agents.list")]);
  composer.setCommands(commands);
  $("new-session-agent").replaceChildren(
    ...agents.map((a) => Object.assign(document.createElement("option"), { value: a.id, textContent: a.name })),
  );
  applyView();
  await openSession(state.key || wantedKey());
  refreshSessions();
  for (const item of state.pending.values()) if (item.status === "offline") await deliver(item);
}

function notice(text) {
  $("notice").textContent = text;
  $("notice").hidden = !text;
}
function showError(err) {
  notice(err.disconnected ? "" : `Error: ${err.message}`);
}

// ---- sessions --------------------------------------------------------------------------------

const sessionList = createSessionList({
  list: $("session-list"),
  onOpen: (key) => {
    closeDrawers();
    openSession(key).catch(showError);
  },
});

let sessionsTimer;
async function refreshSessions() {
  clearTimeout(sessionsTimer);
  if (!state.connected) return;
  const kind = $("session-kind").value;
  const search = $("session-search").value.trim();
  try {
    const { sessions } = await call("sessions.list", {
      limit: 200,
      ...(kind && { kinds: [kind] }),
      ...(search && { search }),
    });
    sessionList.show(sessions, { active: Boolean(kind || search) });
    const open = sessions.find((s) => s.key === state.key);
    if (open) $("session-title").textContent = titleOf(open);
  } catch (err) {
    showError(err);
  }
  // Other sessions change without telling this page (it listens to the open one only): look again.
  sessionsTimer = setTimeout(refreshSessions, 10_000);
}
$("session-kind").onchange = refreshSessions;
$("session-search").oninput = () => {
  clearTimeout(sessionsTimer);
  sessionsTimer = setTimeout(refreshSessions, 250);
};

async function openSession(key) {
  const page = await call("chat.history", { sessionKey: key, limit: PAGE, includeTools: true });
  if (page.sessionKey !== state.key) {
    state.older = [];
    state.live = [];
    state.running.clear();
  }
  state.key = page.sessionKey;
  await call("subscribe", { sessionKeys: [state.key] });
  if (document.body.dataset.view !== "health")
    history.replaceState(null, "", `#/session/${encodeURIComponent(state.key)}`);
  $("session-title").textContent = state.key;
  $("input").value = sessionStorage.getItem(`${DRAFT_KEY}:${state.key}`) ?? $("input").value;
  sessionList.select(state.key);
  applyLatest(page);
  await refreshPanel();
}

// ---- conversation ----------------------------------------------------------------------------

const identity = (m) => `${m.timestamp}|${m.role}|${m.runId ?? ""}`;

function applyLatest(page) {
  if (page.sessionId !== state.sessionId) state.older = [];
  state.sessionId = page.sessionId;
  state.latest = page.messages;
  if (state.older.length === 0) {
    state.cursor = page.cursor;
    state.hasMore = page.hasMore;
  }
  renderConversation();
}

let refreshTimer;
/** Fetches the newest page again soon (events come in bursts: one fetch per burst). */
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(async () => {
    try {
      const key = state.key;
      const page = await call("chat.history", { sessionKey: key, limit: PAGE, includeTools: true });
      if (page.sessionKey === state.key) applyLatest(page);
      for (const id of [...state.pending.keys()]) if (state.pending.get(id).done) state.pending.delete(id);
      saveOutbox();
      renderPending();
      await refreshPanel();
      refreshSessions();
    } catch (err) {
      showError(err);
    }
  }, 120);
}

$("load-older").onclick = async () => {
  const log = $("log");
  const before = log.scrollHeight - log.scrollTop;
  const page = await call("chat.history", {
    sessionKey: state.key,
    limit: PAGE,
    includeTools: true,
    cursor: state.cursor,
  }).catch(showError);
  if (!page) return;
  state.older = [...page.messages, ...state.older];
  state.cursor = page.cursor;
  state.hasMore = page.hasMore;
  renderConversation();
  log.scrollTop = log.scrollHeight - before;
};

function renderConversation() {
  const log = $("log");
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  const latestIds = new Set(state.latest.map(identity));
  const messages = [...state.older.filter((m) => !latestIds.has(identity(m))), ...state.latest];
  const kept = new Set(messages.filter((m) => m.announce).map((m) => (typeof m.content === "string" ? m.content : "")));
  state.live = state.live.filter((l) => !kept.has(l.text));
  $("messages").replaceChildren(
    ...renderMessages(messages),
    ...state.live.map((l) => bubble({ role: "assistant", announce: true }, l.text)),
  );
  $("load-older").hidden = !state.hasMore;
  if (messages.length === 0 && state.live.length === 0) {
    const empty = document.createElement("p");
    empty.className = "muted";
    empty.textContent = "No messages yet. Say something, or type / for commands.";
    $("messages").append(empty);
  }
  renderPending();
  if (atBottom) log.scrollTop = log.scrollHeight;
}

/** Shows the messages typed here that the history does not show as answered (web/pending.js). */
function renderPending() {
  const elements = { messages: $("messages"), pending: $("pending"), log: $("log"), activity: $("activity") };
  showPending(state, elements, () => {
    saveOutbox();
    renderPending();
  });
}

// ---- sending ---------------------------------------------------------------------------------

function saveOutbox() {
  const waiting = [...state.pending.values()].filter((p) => p.status === "offline" || p.status === "sending");
  sessionStorage.setItem(OUTBOX_KEY, JSON.stringify(waiting.map(({ id, key, text }) => ({ id, key, text }))));
}

function restoreOutbox() {
  try {
    for (const { id, key, text } of JSON.parse(sessionStorage.getItem(OUTBOX_KEY) ?? "[]"))
      state.pending.set(id, { id, key, text, status: "offline" });
  } catch {
    sessionStorage.removeItem(OUTBOX_KEY);
  }
}

/** Sends one typed message; one the connection lost is sent again on reconnect with the same key (the gateway drops repeats). */
async function deliver(item) {
  item.status = "sending";
  saveOutbox();
  renderPending();
  try {
    const result = await call("chat.send", { sessionKey: item.key, message: item.text, idempotencyKey: item.id });
    if (result.status === "started") {
      item.runId = result.runId;
      item.acceptedAt = Date.now();
      if (state.ended.has(result.runId)) item.done = true;
      else if (item.status === "sending") item.status = "queued";
    } else item.done = true;
    if (item.done) refreshSoon();
    // Events can be missed around a reconnect: ask the gateway when this run ends, then look again.
    if (result.status === "started" || result.status === "duplicate") watchRun(result.runId, item);
  } catch (err) {
    if (err.disconnected) item.status = "offline";
    else Object.assign(item, { status: "failed", error: err.message });
  }
  saveOutbox();
  renderPending();
}

/** A typed message's run ended; one stopped before it began was dropped, and stays on screen marked so. */
function settle(item, run) {
  if (run.status === "aborted" && run.startedAt === undefined) state.dropped.set(item.id, item);
  item.done = true;
}

/** Waits (in the background) for a run to end, then marks its message done and refreshes the history. */
function watchRun(runId, item) {
  call("agent.wait", { runId, timeoutMs: 600_000 })
    .then((run) => {
      if (FINAL.has(run.status)) settle(item, run);
      refreshSoon();
    })
    .catch(() => undefined); // disconnected or an unknown run: the reconnect sends and watches again
}

function send(text) {
  state.droppedByStop = 0;
  const item = { id: newId(), key: state.key, text, status: "sending" };
  state.pending.set(item.id, item);
  $("input").value = "";
  sessionStorage.removeItem(`${DRAFT_KEY}:${state.key}`);
  return deliver(item);
}

const composer = createComposer({ form: $("composer"), input: $("input"), list: $("completions"), onSubmit: send });
$("input").addEventListener("input", () => sessionStorage.setItem(`${DRAFT_KEY}:${state.key}`, $("input").value));
$("stop").onclick = () =>
  call("chat.abort", { sessionKey: state.key })
    .then(({ cleared }) => {
      state.droppedByStop = cleared;
      notice(stoppedText());
    })
    .catch(showError);

/** What a stop did, as the notice says it: /stop's reply says the same on every channel. */
function stoppedText() {
  const n = state.droppedByStop;
  return `The run was stopped.${n ? ` Dropped ${n} queued message${n === 1 ? "" : "s"}: not answered.` : ""}`;
}

// ---- events ----------------------------------------------------------------------------------

function onEvent(name, payload) {
  if (!payload || payload.sessionKey !== state.key) return;
  if (name === "agent") {
    const item = [...state.pending.values()].find((p) => p.runId === payload.runId || p.id === payload.runId);
    if (FINAL.has(payload.status)) {
      state.running.delete(payload.runId);
      state.ended.add(payload.runId);
      if (item) settle(item, payload);
      if (payload.status === "aborted") notice(stoppedText());
      else if (payload.status !== "ok")
        notice(`The run ${payload.status}${payload.error ? `: ${payload.error}` : "."}`);
    } else {
      state.running.set(payload.runId, Date.now());
      if (item) item.status = payload.status === "running" ? "running" : "queued";
    }
    renderPending();
  }
  // Every reply, notice and announce arrives as a delivery; a reply is shown by the history it is written to.
  if (name === "chat.delivery" && payload.kind !== "reply")
    state.live.push({ id: payload.messageId, text: payload.text });
  refreshSoon();
}

// ---- panel -----------------------------------------------------------------------------------

const panelElements = {
  facts: $("panel-facts"),
  sendEffective: $("send-effective"),
  sendButtons: [...document.querySelectorAll("[data-send]")],
  subagents: $("subagents"),
  pendingDeliveries: $("pending-deliveries"),
  failures: $("failures"),
};

let panelTimer;
async function refreshPanel() {
  clearTimeout(panelTimer);
  const asked = Date.now();
  const info = await call("sessions.get", { key: state.key });
  if (info.key !== state.key) return;
  // A run that ended while this page was disconnected sent its end event to nobody: the panel's runs tell.
  const active = new Set(info.activeRuns.map((run) => run.runId));
  for (const item of state.pending.values())
    if (item.runId && item.acceptedAt < asked && !active.has(item.runId) && !item.done) {
      item.done = true;
      state.running.delete(item.runId);
      refreshSoon();
    }
  // Sub-agents run in their own sessions, whose events this page does not receive: look again while one is unfinished.
  if (info.subagents.some((s) => s.state === "running" || s.state === "ended"))
    panelTimer = setTimeout(() => refreshPanel().catch(showError), 2_000);
  for (const [runId, since] of state.running) if (since < asked && !active.has(runId)) state.running.delete(runId);
  for (const run of info.activeRuns) if (!state.running.has(run.runId)) state.running.set(run.runId, asked);
  renderPending();
  renderPanel(panelElements, info, {
    onStopSubagent: (runId) =>
      call("subagents.stop", { sessionKey: state.key, runId }).then(refreshPanel).catch(showError),
  });
}

for (const button of panelElements.sendButtons) button.onclick = () => send(`/send ${button.dataset.send}`);
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

// ---- new session, token, layout --------------------------------------------------------------

$("new-session").onclick = () => {
  $("new-session-form").hidden = false;
  $("new-session-label").focus();
};
$("new-session-cancel").onclick = () => {
  $("new-session-form").hidden = true;
};
$("new-session-form").onsubmit = async (event) => {
  event.preventDefault();
  const label = $("new-session-label").value.trim();
  try {
    const { key } = await call("sessions.create", { agentId: $("new-session-agent").value || undefined });
    await call("sessions.patch", { key, ...(label && { label }) });
    $("new-session-form").hidden = true;
    $("new-session-label").value = "";
    $("new-session-error").textContent = "";
    await openSession(key);
    refreshSessions();
    $("input").focus();
  } catch (err) {
    $("new-session-error").textContent = err.message;
  }
};

$("auth-form").onsubmit = (event) => {
  event.preventDefault();
  const token = $("auth-token").value;
  if ($("auth-remember").checked) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
  $("auth-token").value = "";
  connection.retry(token);
};

function closeDrawers() {
  for (const [button, drawer] of [
    ["toggle-sessions", "sidebar"],
    ["toggle-panel", "panel"],
  ]) {
    $(drawer).classList.remove("open");
    $(button).setAttribute("aria-expanded", "false");
  }
}
for (const [button, drawer] of [
  ["toggle-sessions", "sidebar"],
  ["toggle-panel", "panel"],
]) {
  $(button).onclick = () => {
    const open = !$(drawer).classList.contains("open");
    closeDrawers();
    $(drawer).classList.toggle("open", open);
    $(button).setAttribute("aria-expanded", String(open));
  };
}
document.addEventListener("keydown", (event) => event.key === "Escape" && closeDrawers());
window.addEventListener("hashchange", () => {
  if (applyView()) return;
  if (state.connected && wantedKey() !== state.key) openSession(wantedKey()).catch(showError);
});

restoreOutbox();
applyView();
