// The page's frame: the sessions and panel drawers (narrow screens), the new-session form and the
// token form.

const $ = (id) => document.getElementById(id);
const DRAWERS = [
  ["toggle-sessions", "sidebar"],
  ["toggle-panel", "panel"],
];

/** Closes both drawers. */
export function closeDrawers() {
  for (const [button, drawer] of DRAWERS) {
    $(drawer).classList.remove("open");
    $(button).setAttribute("aria-expanded", "false");
  }
}

function wireDrawers() {
  for (const [button, drawer] of DRAWERS) {
    $(button).onclick = () => {
      const open = !$(drawer).classList.contains("open");
      closeDrawers();
      $(drawer).classList.toggle("open", open);
      $(button).setAttribute("aria-expanded", String(open));
    };
  }
  document.addEventListener("keydown", (event) => event.key === "Escape" && closeDrawers());
}

/** The new-session form: creates the session (with its label), then opens it. */
function wireNewSession({ call, openSession, refreshSessions }) {
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
}

/** The token form: kept in localStorage only when asked to, then the connection tries again. */
function wireAuth({ connection, tokenKey }) {
  $("auth-form").onsubmit = (event) => {
    event.preventDefault();
    const token = $("auth-token").value;
    if ($("auth-remember").checked) localStorage.setItem(tokenKey, token);
    else localStorage.removeItem(tokenKey);
    $("auth-token").value = "";
    connection.retry(token);
  };
}

/** Wires the frame's controls: `call`, `openSession`, `refreshSessions`, the `connection` and the token's storage key. */
export function wireLayout(deps) {
  wireDrawers();
  wireNewSession(deps);
  wireAuth(deps);
}
