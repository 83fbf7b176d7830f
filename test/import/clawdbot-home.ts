// A Clawdbot home built from the shapes in the specification (shared/spec/sessions.md §2, channels.md
// config shapes): legacy keys and field names, a transcript with tool calls, a corrupt store and a
// corrupt transcript line.
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, readdir, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const T0 = Date.parse("2026-01-20T10:00:00Z");

const CONFIG = `// ~/.clawdbot/clawdbot.json (JSON5)
{
  gateway: { port: 18789, auth: { token: "not-imported-token-123" } },
  channels: {
    telegram: { botToken: "123:ABC", allowFrom: ["111", "@ann"], dmPolicy: "pairing", streamMode: "partial",
                groups: { "*": { requireMention: true } } },
    discord: { token: "MTIz.discord", dm: { policy: "allowlist", allowFrom: ["222"] }, groupPolicy: "allowlist" },
    slack: { botToken: "xoxb-1" },
  },
  whatsapp: { allowFrom: ["+15550001"], authDir: "~/.clawdbot/credentials/whatsapp" }, // legacy top-level key
  session: {
    dmScope: "per-channel-peer",
    identityLinks: { alice: ["telegram:111", "discord:222"] },
    sendPolicy: { default: "allow", rules: [{ action: "deny", match: { provider: "discord", chatType: "group" } }] },
    store: "~/.clawdbot/agents/{agentId}/sessions/sessions.json",
  },
  agents: {
    defaults: {
      model: { primary: "anthropic/claude-sonnet-4-5", fallbacks: ["openai/gpt-4o"] },
      models: { "openai/gpt-4o-mini": { alias: "mini" } },
    },
    list: [{ id: "main", default: true }, { id: "work" }],
  },
  models: { providers: { openai: { baseUrl: "http://127.0.0.1:11434/v1", apiKey: "sk-x", api: "openai-completions" },
                         ollama: { baseUrl: "http://127.0.0.1:11434" } } },
}
`;

function line(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

function header(id: string): string {
  return line({ type: "session", version: 3, id, timestamp: new Date(T0).toISOString(), cwd: "/home/ann/clawd" });
}

function message(role: string, content: unknown, at: number, extra: Record<string, unknown> = {}): string {
  return line({
    type: "message",
    id: `m${at}`,
    timestamp: new Date(at).toISOString(),
    message: { role, content, timestamp: at, ...extra },
  });
}

/** The main session's transcript: a question, a tool call and its result, the answer. */
const MAIN_TRANSCRIPT =
  header("s-main") +
  line({ type: "model_change", provider: "anthropic", modelId: "claude-sonnet-4-5" }) +
  message("user", [{ type: "text", text: "What is in notes.txt?" }], T0 + 1000) +
  message(
    "assistant",
    [{ type: "toolCall", id: "call_1", name: "read", arguments: { path: "notes.txt" } }],
    T0 + 2000,
    {
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      stopReason: "toolUse",
      usage: { input: 20, output: 5, totalTokens: 25 },
    },
  ) +
  message("toolResult", [{ type: "text", text: "buy oat milk" }], T0 + 3000, {
    toolCallId: "call_1",
    toolName: "read",
    isError: false,
  }) +
  // An older line whose message has no timestamp of its own.
  line({
    type: "message",
    timestamp: new Date(T0 + 4000).toISOString(),
    message: { role: "assistant", content: [{ type: "text", text: "It says: buy oat milk." }] },
  });

const STORE = {
  // legacy bare main key and legacy lastProvider
  main: {
    sessionId: "s-main",
    updatedAt: T0 + 4000,
    lastProvider: "telegram",
    lastTo: "111",
    sessionFile: "/home/ann/.clawdbot/agents/main/sessions/s-main.jsonl",
    inputTokens: 20,
    outputTokens: 5,
  },
  // legacy group key of a WhatsApp group, legacy provider and room
  "group:12036312@g.us": {
    sessionId: "s-wa",
    updatedAt: T0 + 500,
    provider: "whatsapp",
    room: "Family",
    chatType: "group",
  },
  "agent:main:telegram:group:-1001234567890:topic:99": {
    sessionId: "s-topic",
    updatedAt: T0 + 600,
    channel: "telegram",
    chatType: "group",
  },
  "cron:Nightly-Report": { sessionId: "s-cron", updatedAt: T0 + 700 },
  // no sessionId: cannot be imported
  "agent:main:discord:channel:555": { updatedAt: T0 + 800, channel: "discord" },
};

/** Writes the home into a new temp folder and returns its path. */
export async function buildClawdbotHome(): Promise<string> {
  const home = await mkdtemp(path.join(os.tmpdir(), "clawdbot-"));
  const main = path.join(home, "agents", "main", "sessions");
  const work = path.join(home, "agents", "work", "sessions");
  await mkdir(main, { recursive: true });
  await mkdir(work, { recursive: true });
  await mkdir(path.join(home, "credentials"));
  await writeFile(path.join(home, "clawdbot.json"), CONFIG);
  await writeFile(path.join(home, "credentials", "telegram-allowFrom.json"), line({ version: 1, allowFrom: ["333"] }));
  await writeFile(path.join(main, "sessions.json"), JSON.stringify(STORE, null, 2));
  await writeFile(path.join(main, "s-main.jsonl"), MAIN_TRANSCRIPT);
  await writeFile(path.join(main, "s-wa.jsonl"), header("s-wa") + message("user", "hi all", T0 + 500));
  await writeFile(path.join(main, "s-topic-99.jsonl"), header("s-topic") + message("user", "topic hi", T0 + 600));
  // A session reset left this one behind; Clawdbot named it `.reset.<time>`.
  await writeFile(
    path.join(main, "s-old.jsonl.reset.2026-01-01T00-00-00-000Z"),
    header("s-old") + message("user", "old", T0 - 1),
  );
  // A transcript with a torn, unreadable line in the middle.
  await writeFile(
    path.join(main, "s-cron.jsonl"),
    `${header("s-cron")}{"type":"message","message":{"ro\n${message("user", "report", T0 + 700)}`,
  );
  // The work agent's store does not parse; its transcript still comes along.
  await writeFile(path.join(work, "sessions.json"), '{ "agent:work:main": { sessionId: "w1", ');
  await writeFile(path.join(work, "w1.jsonl"), header("w1") + message("user", "work hi", T0));
  return home;
}

/** A hash of every file's path, bytes, mode and modification time under `dir`. */
export async function hashTree(dir: string): Promise<string> {
  const hash = createHash("sha256");
  const walk = async (at: string): Promise<void> => {
    for (const name of (await readdir(at)).sort()) {
      const file = path.join(at, name);
      const info = await stat(file);
      hash.update(`${path.relative(dir, file)} ${info.mode} ${info.mtimeMs}\n`);
      if (info.isDirectory()) await walk(file);
      else hash.update(await readFile(file));
    }
  };
  await walk(dir);
  return hash.digest("hex");
}
