// The Health view (#/health): readiness with each channel account and MCP server, outbox and inbox
// depth, recent delivery failures with their reason, and messages and turns per minute over the
// last hour, from the gateway's `health` method, fetched again every few seconds while shown.
import { ago } from "./sessions.js";

const SVG = "http://www.w3.org/2000/svg";
const REFRESH_MS = 5_000;
const PHASE_TEXT = { ready: "Ready", starting: "Starting", draining: "Stopping" };

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  return node;
}

/** One row per part: its name, ok or not, and why. */
function partRows(list, parts, empty) {
  list.replaceChildren(
    ...parts.map((part) =>
      el(
        "li",
        { className: part.ok ? "ok" : "bad" },
        el("strong", { textContent: part.name }),
        el("span", { className: "badge", textContent: part.ok ? "ok" : "down" }),
        el("span", { className: "muted", textContent: part.reason }),
      ),
    ),
  );
  if (parts.length === 0) list.append(el("li", { className: "muted", textContent: empty }));
}

/** Messages (bars) and turns (a line) per minute, oldest on the left; totals on the element for tests and readers. */
function renderChart(figure, activity) {
  const width = 600;
  const height = 120;
  const max = Math.max(1, ...activity.map((m) => Math.max(m.messages, m.turns)));
  const step = width / Math.max(1, activity.length);
  const y = (n) => height - 3 - (n / max) * (height - 13);
  const chart = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    preserveAspectRatio: "none",
    class: "chart",
    role: "img",
  });
  const messages = activity.reduce((sum, m) => sum + m.messages, 0);
  const turns = activity.reduce((sum, m) => sum + m.turns, 0);
  const label = `Last hour: ${messages} messages, ${turns} turns (peak ${max} per minute)`;
  chart.setAttribute("aria-label", label);
  chart.append(svg("title", {}));
  chart.firstChild.textContent = label;
  activity.forEach((minute, i) => {
    if (minute.messages > 0)
      chart.append(
        svg("rect", {
          class: "bar",
          x: i * step + 1,
          y: y(minute.messages),
          width: Math.max(1, step - 2),
          height: height - 3 - y(minute.messages),
          "data-count": minute.messages,
        }),
      );
  });
  const points = activity.map((m, i) => `${(i + 0.5) * step},${y(m.turns)}`).join(" ");
  chart.append(svg("polyline", { class: "turns", points, fill: "none" }));
  Object.assign(figure.dataset, { messages: String(messages), turns: String(turns) });
  figure.replaceChildren(
    chart,
    el("figcaption", {
      className: "muted",
      textContent: `${label}. Bars: messages; line: turns; from an hour ago (left) to now.`,
    }),
  );
}

function renderFailures(list, failures) {
  list.replaceChildren(
    ...failures.map((f) =>
      el(
        "li",
        {},
        el("strong", { textContent: f.reason }),
        ` ${ago(f.at)}: ${f.kind} to ${f.channel}/${f.accountId}:${f.to ?? "?"} (${f.attempts} ${f.attempts === 1 ? "attempt" : "attempts"}): ${f.message}`,
      ),
    ),
  );
  if (failures.length === 0) list.append(el("li", { className: "muted", textContent: "none" }));
}

function render(root, report) {
  const $ = (name) => root.querySelector(`[data-health="${name}"]`);
  const verdict = $("verdict");
  verdict.textContent = PHASE_TEXT[report.phase] ?? report.phase;
  verdict.dataset.state = report.ready ? "ok" : "bad";
  $("state-reason").textContent = report.parts.find((p) => p.kind === "state")?.reason ?? "";
  partRows(
    $("channels"),
    report.parts.filter((p) => p.kind === "channel"),
    "no platform channel runs",
  );
  partRows(
    $("mcp"),
    report.parts.filter((p) => p.kind === "mcp"),
    "no MCP server configured",
  );
  const oldest = report.outbox.pending ? `, oldest waiting ${Math.round(report.outbox.oldestAgeMs / 1000)}s` : "";
  $("outbox").textContent = `${report.outbox.pending} waiting to be delivered${oldest}`;
  $("inbox").textContent = `${report.inbox.pending} stored and not handled yet`;
  renderFailures($("failures"), report.failures);
  renderChart($("chart"), report.activity);
}

/** The Health view in `root`; `call(method, params)` speaks to the gateway. Shown with `show()`, stopped with `hide()`. */
export function createHealthView({ root, call, onError }) {
  let timer;
  async function refresh() {
    clearTimeout(timer);
    try {
      render(root, await call("health"));
    } catch (err) {
      onError(err);
    }
    if (!root.hidden) timer = setTimeout(refresh, REFRESH_MS);
  }
  root.querySelector('[data-health="refresh"]').onclick = refresh;
  return {
    show() {
      root.hidden = false;
      return refresh();
    },
    hide() {
      root.hidden = true;
      clearTimeout(timer);
    },
  };
}
