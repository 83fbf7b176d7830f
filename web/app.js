// The control UI: sessions, one conversation, the composer and the session panel, all through the
// gateway's WebSocket protocol (docs/gateway.md). What the conversation shows is the session's
// history (chat.history), fetched again whenever an event of the session arrives, so every tab on
// a session shows the same messages, and what was shown is still there after a reload.
import { createComposer } from "./composer.js";
import { createConnection } from "./connection.js";
import { createConnectionStatus } from "./connection-status.js";
import { createHealthView } from "./health.js";
import { createSessionPanel } from "./session-panel.js";
import { showPending } from "./pending.js";
import { bubble, renderMessages } from "./render.js";
import { createSessionList, sessionName } from "./sessions.js";
import { closeDrawers, wireLayout } from "./layout.js";
import { createSessionEvents, stoppedText } from "./session-events.js";
import { createTypedMessages } from "./typed-messages.js";

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = "switchboard.token";
const DRAFT_KEY = "switchboard.draft";
const PAGE = 50;

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

const showStatus = createConnectionStatus({ tokenKey: TOKEN_KEY, notice });
/** The composer takes text once the page is connected and has a session open: a message typed before has nowhere to go. */
function composerReady() {
  const ready = state.connected && Boolean(state.key);
  $("input").disabled = !ready;
  $("send").disabled = !ready;
}

function showConnection(s) {
  state.connected = s.state === "connected";
  showStatus(s);
  composerReady();
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
  await typed.resend();
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
  composerReady();
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
      typed.save();
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
    typed.save();
    renderPending();
  });
}

// ---- sending ---------------------------------------------------------------------------------

const typed = createTypedMessages({ state, call, render: renderPending, refreshSoon });

function send(text) {
  state.droppedByStop = 0;
  const item = { id: newId(), key: state.key, text, status: "sending" };
  state.pending.set(item.id, item);
  $("input").value = "";
  sessionStorage.removeItem(`${DRAFT_KEY}:${state.key}`);
  return typed.deliver(item);
}

const composer = createComposer({ form: $("composer"), input: $("input"), list: $("completions"), onSubmit: send });
$("input").addEventListener("input", () => sessionStorage.setItem(`${DRAFT_KEY}:${state.key}`, $("input").value));
$("stop").onclick = () =>
  call("chat.abort", { sessionKey: state.key })
    .then(({ cleared }) => {
      state.droppedByStop = cleared;
      notice(stoppedText(state));
    })
    .catch(showError);

// ---- events ----------------------------------------------------------------------------------

const sessionEvents = createSessionEvents({ state, notice, renderPending, refreshSoon });
function onEvent(name, payload) {
  sessionEvents(name, payload);
}

// ---- panel -----------------------------------------------------------------------------------

const panel = createSessionPanel({ state, call, renderPending, refreshSoon, showError, send });
function refreshPanel() {
  return panel.refresh();
}

// ---- layout ----------------------------------------------------------------------------------

wireLayout({ call, openSession, refreshSessions, connection, tokenKey: TOKEN_KEY });
window.addEventListener("hashchange", () => {
  if (applyView()) return;
  if (state.connected && wantedKey() !== state.key) openSession(wantedKey()).catch(showError);
});

typed.restore();
applyView();
