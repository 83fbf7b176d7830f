import type http from "node:http";
import type { GatewayCore } from "./gateway-core.js";

/**
 * `GET /readyz`: 200 once the stores are open and replay is done, 503 while starting or draining.
 * Any caller learns the status and phase (a load balancer needs no secret); an authorized caller
 * (loopback without a token, else the token) also gets each part with its reason, since reasons
 * can name hosts and errors.
 */
export function serveReadyz(core: GatewayCore, res: http.ServerResponse, detailed: boolean): void {
  const report = core.health();
  res.writeHead(report.ready ? 200 : 503, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
  });
  res.end(JSON.stringify(detailed ? report : { ready: report.ready, phase: report.phase }));
}

/** `GET /metrics`: the Prometheus text exposition of the gateway's registry (the caller is authorized already). */
export async function serveMetrics(core: GatewayCore, res: http.ServerResponse): Promise<void> {
  const metrics = core.metrics;
  if (!metrics) {
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
    return void res.end("this gateway was started without metrics\n");
  }
  const text = await metrics.scrape();
  res.writeHead(200, { "content-type": metrics.contentType, "cache-control": "no-store" });
  res.end(text);
}
