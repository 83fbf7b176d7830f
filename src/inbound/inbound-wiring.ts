import { NO_COMMANDS } from "../commands/command-dispatcher.js";
import { createSessionKeyContext } from "../routing/session-key-context.js";
import { createKeyedMutex } from "../sessions/keyed-mutex.js";
import { createCommandEcho } from "./command-echo.js";
import { createAct } from "./inbound-act.js";
import { createFinish } from "./inbound-finish.js";
import { routeStored } from "./inbound-route.js";
import type { InboundDeps } from "./inbound-types.js";
import { createSetAside } from "./set-aside.js";

/** The inbound pipeline's parts, wired once: what each of its steps is handed. */
export function wirePipeline(deps: InboundDeps) {
  const { logger } = deps;
  const keys = createSessionKeyContext(deps.config);
  const echo = createCommandEcho({ sessions: deps.sessions, logger, ...(deps.emit && { emit: deps.emit }) });
  const guard = createSetAside({
    inbox: deps.inbox,
    deliver: deps.deliver,
    logger,
    ...(deps.capabilitiesOf && { capabilitiesOf: deps.capabilitiesOf }),
    route: (entry, message) => routeStored(deps.config, keys, entry, message).parsed,
  });
  return {
    deps,
    logger,
    keys,
    echo,
    guard,
    commands: deps.commands ?? NO_COMMANDS,
    /** Messages of one session are handled one after another, in arrival order, up to their lane. */
    ordered: createKeyedMutex(),
    finish: createFinish({ inbox: deps.inbox, logger }),
    act: createAct({ ...deps, echo, recordStart: guard.recordStart, bind: deps.inbox.bind }),
  };
}

/** The wired inbound pipeline. */
export type Pipeline = ReturnType<typeof wirePipeline>;
