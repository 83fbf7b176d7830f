import type { Config } from "../config/schema/index.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { Workspace } from "../workspace/workspace-port.js";
import { type PromptPart, type SessionFacts, buildPromptParts } from "./system-prompt.js";
import { type PromptFileReader, readPromptFiles } from "./workspace/prompt-files.js";

/** What a turn's system prompt is made from; the agent runtime and `/context` pass the same. */
export interface TurnPromptInput {
  config: Config;
  agentId: string;
  sessionKey: string;
  modelRef: string;
  /** the message the turn answers, for the session facts */
  message?: InboundMessage | undefined;
  /** the agent's workspace; default none (no files) */
  workspace?: Workspace | undefined;
  toolNames: readonly string[];
  extra?: string | undefined;
  /** how the workspace files are read; default: read from disk every time */
  readFiles?: PromptFileReader;
}

/** Who speaks where, from a channel message. */
function factsOf(message: InboundMessage | undefined): SessionFacts | undefined {
  if (!message) return undefined;
  const speaker = message.sender.name ?? message.sender.username ?? message.sender.id;
  return { channel: message.channel, chatType: message.chat.type, speaker };
}

/** The system prompt parts of a turn, with the workspace files read now (each capped). */
export async function turnPromptParts(input: TurnPromptInput): Promise<PromptPart[]> {
  const read = input.readFiles ?? readPromptFiles;
  const files = await read(input.workspace, input.config.agents.defaults.workspace.promptFileMaxChars);
  const facts = factsOf(input.message);
  return buildPromptParts({
    config: input.config,
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    modelRef: input.modelRef,
    files,
    toolNames: input.toolNames,
    extra: input.extra,
    ...(facts && { facts }),
  });
}
