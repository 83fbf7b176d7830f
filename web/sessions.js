// The session list: sessions.list rows filtered by kind and search, newest first, with an unread
// marker for sessions that changed since this browser last showed them.

const SEEN_KEY = "switchboard.seen";

function readSeen() {
  try {
    return JSON.parse(localStorage.getItem(SEEN_KEY) ?? "{}");
  } catch {
    return {};
  }
}

/** "12s ago", "5m ago", "3h ago", "2d ago". */
export function ago(ms, now = Date.now()) {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** The name a person knows a session by: the gateway's title (a sub-agent by its task, the main session as such). */
export function sessionName(row) {
  return row.title || row.label || row.displayName || row.subject || row.key;
}

/** Renders `rows` into `list`; `onOpen(key)` when one is chosen. */
export function createSessionList({ list, onOpen }) {
  let rows = [];
  let filtered = false;
  let current = "";
  const seen = readSeen();

  function markSeen(key, updatedAt) {
    seen[key] = Math.max(seen[key] ?? 0, updatedAt ?? Date.now());
    localStorage.setItem(SEEN_KEY, JSON.stringify(seen));
  }

  function render() {
    list.replaceChildren();
    for (const row of rows) {
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.key = row.key;
      // The key is one hover away; the row itself stays one line per name.
      button.title = row.key;
      if (row.key === current) button.setAttribute("aria-current", "true");
      const name = document.createElement("span");
      name.className = "name";
      const kind = document.createElement("span");
      kind.className = "kind";
      kind.textContent = row.kind;
      const title = document.createElement("span");
      title.className = "title";
      title.textContent = sessionName(row);
      name.append(kind, title);
      const unread = row.key !== current && (seen[row.key] ?? 0) < row.updatedAt;
      if (unread) {
        name.classList.add("unread");
        button.setAttribute("aria-description", "unread");
      }
      const meta = document.createElement("span");
      meta.className = "meta";
      meta.textContent = [row.channel ?? row.lastChannel, ago(row.updatedAt)].filter(Boolean).join(" · ");
      button.append(name, meta);
      button.onclick = () => onOpen(row.key);
      item.append(button);
      list.append(item);
    }
    if (rows.length === 0) {
      const empty = document.createElement("li");
      empty.className = "muted";
      empty.textContent = filtered
        ? "No sessions match this search or kind."
        : "No sessions yet: send a message, or start one with New session.";
      list.append(empty);
    }
  }

  return {
    /** Replaces the rows shown; `filter.active` when a kind or search chose them (an empty list then says so). */
    show(next, filter = { active: false }) {
      rows = next;
      filtered = filter.active;
      const open = rows.find((r) => r.key === current);
      if (open) markSeen(current, open.updatedAt);
      render();
    },
    /** Marks `key` as the open session (and as read). */
    select(key) {
      current = key;
      const open = rows.find((r) => r.key === key);
      markSeen(key, open?.updatedAt);
      render();
    },
  };
}
