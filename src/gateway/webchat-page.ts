/** The built-in web chat: one page, a client of the gateway's WebSocket protocol. */
export const WEBCHAT_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0; display: flex; flex-direction: column; height: 100vh; background: #f6f6f4; }
  header { padding: .6rem 1rem; background: #222; color: #eee; display: flex; gap: .6rem; align-items: center; }
  header input { font: inherit; padding: .2rem .4rem; }
  #log { flex: 1; overflow-y: auto; padding: 1rem; }
  .msg { max-width: 46rem; margin: .35rem 0; padding: .5rem .75rem; border-radius: .6rem; white-space: pre-wrap; }
  .user { background: #dbe9ff; margin-left: auto; }
  .assistant { background: #fff; border: 1px solid #ddd; }
  .notice { color: #666; font-size: .85rem; }
  form { display: flex; gap: .5rem; padding: .75rem 1rem; background: #fff; border-top: 1px solid #ddd; }
  form input { flex: 1; font: inherit; padding: .5rem; }
</style>
</head>
<body>
<header><strong>Switchboard</strong>
  <label>session <input id="session" value="main" size="34"></label>
  <label>token <input id="token" type="password" size="12" placeholder="(loopback: none)"></label>
  <span id="state">connecting...</span></header>
<div id="log" aria-live="polite"></div>
<form id="form"><input id="text" autocomplete="off" placeholder="Message, or /status, /new ..." autofocus><button>Send</button></form>
<script>
const $ = (id) => document.getElementById(id);
$("token").value = localStorage.getItem("switchboard.token") || "";
let ws, nextId = 1, sessionKey = "";
// Runs this page started; events of other runs (agent-to-agent steps) are not chat replies.
const mine = new Set(), early = new Map();
function showRun(p) {
  if (p.state === "final" && p.text) show("assistant", p.text);
  if (p.state !== "final") show("notice", "run " + p.state + (p.error ? ": " + p.error : ""));
}
const pending = new Map();
function show(role, text) {
  const div = document.createElement("div");
  div.className = "msg " + role;
  div.textContent = text;
  $("log").appendChild(div);
  $("log").scrollTop = $("log").scrollHeight;
}
function call(method, params) {
  const id = String(nextId++);
  ws.send(JSON.stringify({ type: "req", id, method, params }));
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
function textOf(m) {
  if (typeof m.content === "string") return m.content;
  return (m.content || []).filter((b) => b.type === "text").map((b) => b.text).join("");
}
async function loadHistory() {
  $("log").textContent = "";
  const h = await call("chat.history", { sessionKey: $("session").value, limit: 100 });
  sessionKey = h.sessionKey;
  // Events of this session only: other chats' replies never reach this page.
  await call("subscribe", { sessionKeys: [sessionKey] });
  for (const m of h.messages) if (m.role === "user" || m.role === "assistant") show(m.role, textOf(m));
}
function connect() {
  ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host);
  ws.onopen = async () => {
    try {
      const token = $("token").value || undefined;
      await call("connect", token ? { auth: { token } } : {});
      $("state").textContent = "connected";
      await loadHistory();
    } catch (e) { $("state").textContent = "refused: " + e.message; }
  };
  ws.onmessage = (ev) => {
    const f = JSON.parse(ev.data);
    if (f.type === "res" && pending.has(f.id)) {
      const p = pending.get(f.id); pending.delete(f.id);
      f.ok ? p.resolve(f.payload) : p.reject(new Error(f.error.code + ": " + f.error.message));
    } else if (f.type === "event" && f.event === "chat" && f.payload.sessionKey === sessionKey && f.payload.command) {
      // Commands and their replies, from this page or any other client; this page showed its own command already.
      if (!(f.payload.role === "user" && mine.has(f.payload.runId))) show(f.payload.role, f.payload.text);
    } else if (f.type === "event" && f.event === "chat" && f.payload.sessionKey === sessionKey) {
      if (mine.has(f.payload.runId)) showRun(f.payload); else early.set(f.payload.runId, f.payload);
    } else if (f.type === "event" && f.event === "chat.delivery" && f.payload.sessionKey === sessionKey) {
      show("assistant", f.payload.text);
    }
  };
  ws.onclose = () => { $("state").textContent = "disconnected, retrying..."; setTimeout(connect, 1500); };
}
$("form").onsubmit = async (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  $("text").value = "";
  show("user", text);
  const id = Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
  mine.add(id);
  try {
    // A command's reply arrives as a chat event, like those of other clients.
    const r = await call("chat.send", { sessionKey: $("session").value, message: text, idempotencyKey: id });
    if (r.status === "started") { mine.add(r.runId); if (early.has(r.runId)) { showRun(early.get(r.runId)); early.delete(r.runId); } }
  } catch (err) { show("notice", err.message); }
};
$("session").onchange = () => loadHistory().catch((e) => show("notice", e.message));
$("token").onchange = () => { localStorage.setItem("switchboard.token", $("token").value); ws.close(); };
connect();
</script>
</body>
</html>
`;
