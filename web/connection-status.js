// How the page shows its link to the gateway: the status chip, the notice while it reconnects
// (with a countdown), the token form when the gateway refuses, and "gateway too old".

const $ = (id) => document.getElementById(id);

function showReconnecting(conn, s, notice) {
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
  return setInterval(tick, 1000);
}

function showUnauthorized(conn, s, tokenKey) {
  conn.textContent = "token needed";
  if (s.hadToken) localStorage.removeItem(tokenKey);
  $("auth-reason").textContent = s.hadToken
    ? "The gateway refused this token. Enter the gateway token."
    : "This gateway requires its token (gateway.auth.token or SWITCHBOARD_GATEWAY_TOKEN).";
  $("auth-token").focus();
}

/** The chip's text for states that need nothing else. */
const PLAIN = { connected: "connected", connecting: "connecting…" };

/** Returns `show(state)`, which renders a connection state (web/connection.js) on the page; `notice` shows a line of text. */
export function createConnectionStatus({ tokenKey, notice }) {
  let countdown;
  return function show(s) {
    const conn = $("conn");
    conn.dataset.state = s.state;
    clearInterval(countdown);
    const connected = s.state === "connected";
    $("input").disabled = !connected;
    $("send").disabled = !connected;
    $("auth").hidden = s.state !== "unauthorized";
    $("too-old").hidden = s.state !== "too-old";
    $("app").hidden = s.state === "unauthorized" || s.state === "too-old";
    if (PLAIN[s.state]) conn.textContent = PLAIN[s.state];
    if (connected) notice("");
    else if (s.state === "reconnecting") countdown = showReconnecting(conn, s, notice);
    else if (s.state === "unauthorized") showUnauthorized(conn, s, tokenKey);
    else if (s.state === "too-old") {
      conn.textContent = "gateway too old";
      $("too-old-reason").textContent =
        `It lacks ${s.missing.join(", ")}. Update Switchboard and restart the gateway, then reload this page.`;
    }
  };
}
