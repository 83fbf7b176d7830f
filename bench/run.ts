import os from "node:os";
import { benchRouting } from "./routing.js";
import { benchSessionListing } from "./session-listing.js";
import { benchInbound } from "./inbound.js";
import { benchSessionStore } from "./session-store.js";
import { benchTranscripts } from "./transcripts.js";

console.log(
  `node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
);
benchRouting();
await benchSessionStore();
await benchTranscripts();
await benchSessionListing();
await benchInbound();
