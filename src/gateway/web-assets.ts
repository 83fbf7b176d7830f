import { readFileSync, readdirSync } from "node:fs";
import type http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";

/** The control UI's folder: plain ES modules, a stylesheet and the page, served as they are. */
const WEB_DIR = path.resolve(import.meta.dirname, "../../web");

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/**
 * No inline script or style, no other origin: the page's modules, its stylesheet and the
 * gateway's own WebSocket. Model output that slipped past the sanitizer still could not run.
 */
const WEB_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** One file the gateway serves to browsers. */
interface Asset {
  type: string;
  body: Buffer;
}

function webFiles(dir: string, prefix: string): Array<[string, string]> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((item): Array<[string, string]> => {
    const full = path.join(dir, item.name);
    if (item.isDirectory()) return webFiles(full, `${prefix}${item.name}/`);
    return TYPES[path.extname(item.name)] ? [[`${prefix}${item.name}`, full]] : [];
  });
}

/**
 * Every URL the control UI needs, read once: `/` (the page), `/ui/<file>` (web/) and
 * `/ui/vendor/<lib>.js`. A fixed table, so no request path ever reaches the file system.
 */
export function loadWebAssets(webDir = WEB_DIR): ReadonlyMap<string, Asset> {
  const require = createRequire(import.meta.url);
  const assets = new Map<string, Asset>();
  const add = (url: string, file: string) =>
    assets.set(url, { type: TYPES[path.extname(file)] ?? "application/octet-stream", body: readFileSync(file) });
  for (const [name, file] of webFiles(webDir, "/ui/")) add(name, file);
  add("/", path.join(webDir, "index.html"));
  // Browsers and tools that ignore the page's <link rel="icon"> still ask for /favicon.ico.
  add("/favicon.ico", path.join(webDir, "favicon.svg"));
  // The vendored libraries, from node_modules (never a CDN): the ES module build beside each package's main file.
  add("/ui/vendor/marked.js", path.join(path.dirname(require.resolve("marked")), "marked.esm.js"));
  add("/ui/vendor/purify.js", path.join(path.dirname(require.resolve("dompurify")), "purify.es.mjs"));
  return assets;
}

/** Answers a GET or HEAD for a control UI file; false when `pathname` is not one. */
export function serveWebAsset(
  assets: ReadonlyMap<string, Asset>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  pathname: string,
): boolean {
  const asset = assets.get(pathname);
  if (!asset || (req.method !== "GET" && req.method !== "HEAD")) return false;
  res.writeHead(200, {
    "content-type": asset.type,
    "content-length": String(asset.body.length),
    "content-security-policy": WEB_CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    // The UI changes with the gateway version; a stale cached module would speak an old protocol.
    "cache-control": "no-cache",
  });
  res.end(req.method === "HEAD" ? undefined : asset.body);
  return true;
}
