import { selectModel } from "../../sessions/model-selection.js";
import { defineCommand } from "../command-definition.js";
import { STRINGS } from "../command-strings.js";
import { patchSession } from "../patch-session.js";
import { sessionModel } from "../session-context.js";
import { describeCatalog } from "./reset-command.js";

/** `/model [name]`: lists the models (this session's marked) or switches this session's model. */
export const modelCommand = defineCommand({
  name: "model",
  usage: "/model [name]",
  summary:
    "Lists the models (this session's marked with *); with a name (alias, provider/model or provider) switches this session's model until a new session.",
  access: "own-session",
  async run(command, scope) {
    const { catalog } = scope;
    if (command.target === undefined) {
      const current = sessionModel(scope, scope.sessions.store.get(scope.context.sessionKey.key)).ref;
      const lines = catalog.entries.map((e) => {
        const ref = `${e.provider}/${e.model}`;
        return `${ref === current ? "*" : "-"} ${ref}${e.aliases?.length ? ` (${e.aliases.join(", ")})` : ""}`;
      });
      return { reply: [STRINGS.modelTitle, ...lines].join("\n") };
    }
    const { model, body } = selectModel(command.target, catalog);
    if (!model || body.trim() !== "") return { reply: STRINGS.modelUnknown(command.target, describeCatalog(catalog)) };
    await patchSession(scope, { providerOverride: model.provider, modelOverride: model.model });
    return { reply: STRINGS.modelSet(`${model.provider}/${model.model}`) };
  },
});
