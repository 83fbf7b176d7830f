// "host:port" as URLs and member rows write it: an IPv6 host goes in brackets (RFC 3986 3.2.2),
// or its colons would run into the port's.

/** `host` and `port` joined; an IPv6 host (one not bracketed yet) in brackets. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** "host:port" or "[v6]:port" split; the host without its brackets. */
export function splitHostPort(address: string): { host: string; port: number } {
  const split = address.lastIndexOf(":");
  return { host: address.slice(0, split).replace(/^\[(.*)\]$/, "$1"), port: Number(address.slice(split + 1)) };
}
