import { type ImportReport, isRecord } from "./import-report.js";
import { type PairedIds, mapChannels } from "./map-channels.js";

/** `session.*` fields that mean the same in both systems. */
const SESSION_FIELDS = [
  "scope",
  "dmScope",
  "mainKey",
  "identityLinks",
  "reset",
  "resetByType",
  "resetByChannel",
  "idleMinutes",
  "resetTriggers",
  "sendPolicy",
  "agentToAgent",
];

/** Providers Switchboard has (an OpenAI-compatible one and Anthropic). */
const PROVIDERS = ["openai", "anthropic"];

function mapSession(raw: unknown, report: ImportReport): Record<string, unknown> | undefined {
  if (!isRecord(raw)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (SESSION_FIELDS.includes(key)) out[key] = value;
    else
      report.unmapped.push({
        where: `session.${key}`,
        reason:
          key === "store" ? "Switchboard keeps each agent's store under its own home" : "no Switchboard equivalent",
      });
  }
  return out;
}

/** `provider/model` of Clawdbot's model setting (a string, or `{ primary, fallbacks }`). */
function primaryModel(value: unknown, where: string, report: ImportReport): string | undefined {
  if (typeof value === "string") return value;
  if (!isRecord(value)) return undefined;
  if (Array.isArray(value.fallbacks) && value.fallbacks.length > 0)
    report.unmapped.push({ where: `${where}.fallbacks`, reason: "Switchboard has no model fallbacks" });
  return typeof value.primary === "string" ? value.primary : undefined;
}

function mapProviders(raw: unknown, report: ImportReport): Record<string, unknown> | undefined {
  if (!isRecord(raw)) return undefined;
  const providers: Record<string, unknown> = {};
  for (const [name, provider] of Object.entries(raw)) {
    if (!PROVIDERS.includes(name) || !isRecord(provider)) {
      report.unmapped.push({
        where: `models.providers.${name}`,
        reason: "Switchboard has the openai (any OpenAI-compatible server, via baseUrl) and anthropic providers only",
      });
      continue;
    }
    providers[name] = Object.fromEntries(Object.entries(provider).filter(([k]) => k === "baseUrl" || k === "apiKey"));
    for (const key of Object.keys(provider))
      if (key !== "baseUrl" && key !== "apiKey")
        report.unmapped.push({ where: `models.providers.${name}.${key}`, reason: "no Switchboard equivalent" });
  }
  return providers;
}

/** Default model, aliases and agent list from Clawdbot's `agents` (and legacy `agent`). */
function mapAgents(
  raw: Record<string, unknown>,
  report: ImportReport,
): { agents: Record<string, unknown>; aliases: Record<string, string> } {
  const agents: Record<string, unknown> = {};
  const aliases: Record<string, string> = {};
  const defaults = isRecord(raw.agents) && isRecord(raw.agents.defaults) ? raw.agents.defaults : {};
  const legacy = isRecord(raw.agent) ? raw.agent : {};
  if (isRecord(raw.agent)) report.notes.push({ where: "agent", reason: "legacy key, read as agents.defaults" });
  const model = primaryModel(defaults.model ?? legacy.model, "agents.defaults.model", report);
  if (model) agents.defaults = { model };
  const models = defaults.models ?? legacy.models;
  if (isRecord(models))
    for (const [ref, settings] of Object.entries(models))
      if (isRecord(settings) && typeof settings.alias === "string") aliases[settings.alias] = ref;
  const list = isRecord(raw.agents) && Array.isArray(raw.agents.list) ? raw.agents.list : [];
  const mapped = list.filter(isRecord).map((agent) => {
    const agentModel = primaryModel(agent.model, `agents.list.${agent.id}.model`, report);
    return {
      id: agent.id,
      ...(agent.default === true && { default: true }),
      ...(typeof agent.name === "string" && { name: agent.name }),
      ...(agentModel && { model: agentModel }),
    };
  });
  if (mapped.length > 0) agents.list = mapped;
  return { agents, aliases };
}

/** Top-level keys the import reads; everything else is reported. */
const READ_KEYS = ["channels", "session", "models", "agents", "agent", "telegram", "discord", "whatsapp", "routing"];

/**
 * Clawdbot's config (parsed JSON5) as a Switchboard config: the channels, session and models
 * parts, plus the agents' ids and default model. Every key it cannot map is in `report.unmapped`.
 */
export function mapClawdbotConfig(
  raw: Record<string, unknown>,
  paired: PairedIds,
  report: ImportReport,
): Record<string, unknown> {
  for (const key of Object.keys(raw))
    if (!READ_KEYS.includes(key) && !key.startsWith("$"))
      report.unmapped.push({
        where: key,
        reason: "outside what import brings over (channels, session, models, agents)",
      });
  const routing = isRecord(raw.routing) ? raw.routing : {};
  const channelsRaw = { ...raw };
  if (routing.allowFrom !== undefined) {
    // The oldest configs kept WhatsApp's allow list under routing.
    report.notes.push({ where: "routing.allowFrom", reason: "legacy key, read as channels.whatsapp.allowFrom" });
    channelsRaw.whatsapp = { allowFrom: routing.allowFrom, ...(isRecord(raw.whatsapp) ? raw.whatsapp : {}) };
  }
  for (const key of Object.keys(routing))
    if (key !== "allowFrom") report.unmapped.push({ where: `routing.${key}`, reason: "no Switchboard equivalent" });
  const channels = mapChannels(channelsRaw, paired, report);
  const session = mapSession(raw.session, report);
  const { agents, aliases } = mapAgents(raw, report);
  const providers = isRecord(raw.models) ? mapProviders(raw.models.providers, report) : undefined;
  if (isRecord(raw.models))
    for (const key of Object.keys(raw.models))
      if (key !== "providers") report.unmapped.push({ where: `models.${key}`, reason: "no Switchboard equivalent" });
  const models = {
    ...(providers && Object.keys(providers).length > 0 && { providers }),
    ...(Object.keys(aliases).length > 0 && { aliases }),
  };
  return {
    ...(Object.keys(channels).length > 0 && { channels }),
    ...(session && { session }),
    ...(Object.keys(agents).length > 0 && { agents }),
    ...(Object.keys(models).length > 0 && { models }),
  };
}
