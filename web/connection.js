// The gateway's WebSocket protocol as the page uses it: connect (with the token when the gateway
// needs one), requests with ids, events, and reconnecting with backoff. An unauthorized connect
// or a gateway that lacks a method this page needs ends the attempts: retrying would not help.

/** Methods this page calls; a gateway that lacks one is too old for it. */
export const REQUIRED_METHODS = [
  "sessions.list",
  "sessions.get",
  "sessions.create",
  "sessions.patch",
  "sessions.reset",
  "chat.history",
  "chat.send",
  "chat.abort",
  "subscribe",
  "commands.list",
  "subagents.stop",
  "agents.list",
];

const MIN_DELAY_MS = 500;
const MAX_DELAY_MS = 10_000;

/** An error a request ended with; `disconnected` when the connection closed before the answer. */
export class CallError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
    this.disconnected = code === "DISCONNECTED";
  }
}

/**
 * Opens and keeps a connection to `url`. `onState({state, ...})` hears connecting, connected,
 * reconnecting (with `retryInMs`), unauthorized (with `message`) and too-old (with `missing`);
 * `onEvent(name, payload)` hears events.
 */
export function createConnection({ url, token, onState, onEvent }) {
  let socket;
  let nextId = 1;
  let attempt = 0;
  let timer;
  let connected = false;
  let stopped = false;
  let currentToken = token;
  const pending = new Map();

  function failPending() {
    for (const { reject } of pending.values())
      reject(new CallError("DISCONNECTED", "the connection to the gateway closed"));
    pending.clear();
  }

  function request(method, params) {
    const id = String(nextId++);
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ type: "req", id, method, params }));
    });
  }

  function open() {
    clearTimeout(timer);
    onState({ state: attempt === 0 ? "connecting" : "reconnecting", attempt });
    socket = new WebSocket(url);
    socket.onopen = async () => {
      try {
        const hello = await request("connect", {
          client: "control-ui",
          ...(currentToken && { auth: { token: currentToken } }),
        });
        const missing = REQUIRED_METHODS.filter((m) => !(hello.methods ?? []).includes(m));
        if (missing.length > 0) {
          stopped = true;
          socket.close();
          return onState({ state: "too-old", missing });
        }
        attempt = 0;
        connected = true;
        onState({ state: "connected" });
      } catch (err) {
        if (err.code === "UNAUTHORIZED") {
          stopped = true;
          onState({ state: "unauthorized", message: err.message, hadToken: Boolean(currentToken) });
        } else {
          // Any other refusal of the handshake: close, so the reconnect loop (with backoff) tries again.
          socket.close();
        }
      }
    };
    socket.onmessage = (message) => {
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch {
        return;
      }
      if (frame.type === "res") {
        const waiting = pending.get(frame.id);
        if (!waiting) return;
        pending.delete(frame.id);
        if (frame.ok) waiting.resolve(frame.payload);
        else waiting.reject(new CallError(frame.error.code, frame.error.message));
      } else if (frame.type === "event") {
        onEvent(frame.event, frame.payload);
      }
    };
    socket.onclose = (event) => {
      const was = connected;
      connected = false;
      failPending();
      if (event.code === 4401 && !stopped) {
        stopped = true;
        onState({ state: "unauthorized", message: event.reason, hadToken: Boolean(currentToken) });
      }
      if (stopped) return;
      // Jittered exponential backoff: a restarting gateway is not hammered by every open tab at once.
      const delay = Math.min(MAX_DELAY_MS, MIN_DELAY_MS * 2 ** attempt) * (0.75 + Math.random() * 0.5);
      attempt += 1;
      onState({ state: "reconnecting", attempt, retryInMs: Math.round(delay), lost: was });
      timer = setTimeout(open, delay);
    };
  }

  open();
  return {
    get connected() {
      return connected;
    },
    /** Sends a request; rejects at once with `disconnected` when there is no connection. */
    call(method, params = {}) {
      if (!connected) return Promise.reject(new CallError("DISCONNECTED", "not connected to the gateway"));
      return request(method, params);
    },
    /** Connects again now, with a new token (after the token prompt). */
    retry(newToken) {
      if (newToken !== undefined) currentToken = newToken;
      stopped = false;
      attempt = 0;
      if (socket && socket.readyState <= WebSocket.OPEN) {
        socket.onclose = null;
        socket.close();
      }
      connected = false;
      failPending();
      open();
    },
  };
}
