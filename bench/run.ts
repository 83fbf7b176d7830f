import os from "node:os";
import { benchRouting } from "./routing.js";

console.log(`node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`);
benchRouting();
