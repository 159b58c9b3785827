/**
 * The client address behind trusted proxies: taken from `Forwarded`
 * (RFC 7239 `for=`) or `X-Forwarded-For` only when the direct peer is one
 * of the operator's proxies, walking the hops right to left past every
 * trusted one. Without trusted proxies, forwarded headers are never read.
 *
 * @module
 */

import { logger } from "@anubis/core";

/** A parsed CIDR: the network's bytes (4 or 16) and its prefix length. */
interface Cidr {
  readonly bytes: Uint8Array;
  readonly prefix: number;
}

/** The bytes of an IPv4 address in dotted form, or `undefined`. */
function ipv4Bytes(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    if (!/^\d{1,3}$/.test(parts[i])) return undefined;
    const value = Number(parts[i]);
    if (value > 255) return undefined;
    bytes[i] = value;
  }
  return bytes;
}

/** The bytes of an IPv6 address (an embedded IPv4 tail allowed), or `undefined`. */
function ipv6Bytes(text: string): Uint8Array | undefined {
  const zone = text.indexOf("%");
  if (zone !== -1) text = text.slice(0, zone);
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === "") return [];
    const out: number[] = [];
    const parts = half.split(":");
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (i === parts.length - 1 && part.includes(".")) {
        const v4 = ipv4Bytes(part);
        if (!v4) return undefined;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (/^[0-9a-f]{1,4}$/i.test(part)) {
        out.push(parseInt(part, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    bytes[2 * i] = all[i] >> 8;
    bytes[2 * i + 1] = all[i] & 255;
  }
  return bytes;
}

/** Whether 16 bytes are an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`). */
function isMapped(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 255 && bytes[11] === 255;
}

/**
 * An address's bytes: 4 for IPv4 (an IPv4-mapped IPv6 address included),
 * 16 for IPv6; `undefined` when it is not an address.
 */
function addressBytes(text: string): Uint8Array | undefined {
  if (!text.includes(":")) return ipv4Bytes(text);
  const bytes = ipv6Bytes(text);
  return bytes && isMapped(bytes) ? bytes.slice(12) : bytes;
}

/** The canonical text of an address's bytes (RFC 5952 for IPv6: lower case, the longest zero run as `::`). */
function addressText(bytes: Uint8Array): string {
  if (bytes.length === 4) return bytes.join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] << 8) | bytes[i + 1]);
  let runStart = -1;
  let runLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > runLength) [runStart, runLength] = [i, j - i];
    i = j;
  }
  const hex = (from: number, to: number) =>
    groups.slice(from, to).map((group) => group.toString(16)).join(":");
  if (runStart === -1) return hex(0, 8);
  return `${hex(0, runStart)}::${hex(runStart + runLength, 8)}`;
}

/** The peer's address as `Deno.serve` gives it, the IPv4-mapped form as IPv4. */
function canonicalPeer(peer: string): string {
  return peer.startsWith("::ffff:") && peer.includes(".") ? peer.slice(7) : peer;
}

/**
 * Parses a CIDR (`10.0.0.0/8`, `fd00::/8`, or an address alone: every bit
 * counts). An IPv4-mapped IPv6 network (`::ffff:10.0.0.0/104`) is its IPv4
 * network.
 *
 * @throws A `RangeError` naming the text when it is not a CIDR.
 */
function parseCidr(text: string): Cidr {
  const slash = text.indexOf("/");
  const address = (slash === -1 ? text : text.slice(0, slash)).trim();
  const raw = address.includes(":") ? ipv6Bytes(address) : ipv4Bytes(address);
  const bits = raw ? raw.length * 8 : 0;
  const prefixText = slash === -1 ? String(bits) : text.slice(slash + 1).trim();
  let prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!raw || !(prefix <= bits)) {
    throw new RangeError(`not a CIDR (an IPv4 or IPv6 address with an optional /prefix): ${text}`);
  }
  let bytes = raw;
  if (raw.length === 16 && isMapped(raw) && prefix >= 96) {
    bytes = raw.slice(12);
    prefix -= 96;
  }
  return { bytes, prefix };
}

/** Whether an address's bytes are inside a CIDR. */
function contains(cidr: Cidr, bytes: Uint8Array): boolean {
  if (cidr.bytes.length !== bytes.length) return false;
  const whole = cidr.prefix >> 3;
  for (let i = 0; i < whole; i++) if (cidr.bytes[i] !== bytes[i]) return false;
  const rest = cidr.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (cidr.bytes[whole] & mask) === (bytes[whole] & mask);
}

/** A hop's node as a forwarded header names it: brackets, quotes and a port stripped. */
function nodeOf(text: string): string {
  let node = text.trim();
  if (node.startsWith('"') && node.endsWith('"') && node.length >= 2) node = node.slice(1, -1);
  if (node.startsWith("[")) {
    const end = node.indexOf("]");
    return end === -1 ? node : node.slice(1, end);
  }
  // One colon: an IPv4 address (or a name) with a port.
  const colon = node.indexOf(":");
  if (colon !== -1 && colon === node.lastIndexOf(":")) return node.slice(0, colon);
  return node;
}

/** The `for=` nodes of a `Forwarded` header, first hop first (a hop without one: `""`). */
function forwardedFor(header: string): string[] {
  const nodes: string[] = [];
  let quoted = false;
  let start = 0;
  const element = (text: string) => {
    let node = "";
    for (const pair of text.split(";")) {
      const equals = pair.indexOf("=");
      if (equals !== -1 && pair.slice(0, equals).trim().toLowerCase() === "for") {
        node = nodeOf(pair.slice(equals + 1));
      }
    }
    nodes.push(node);
  };
  for (let i = 0; i < header.length; i++) {
    const char = header[i];
    if (char === '"') quoted = !quoted;
    else if (char === "\\" && quoted) i++;
    else if (char === "," && !quoted) {
      element(header.slice(start, i));
      start = i + 1;
    }
  }
  element(header.slice(start));
  return nodes;
}

/**
 * The operator's trusted proxies (the `trustedProxies` handler option, the
 * cli's `--trusted-proxy`): for a request whose direct peer is one of them,
 * the client is the first untrusted hop of its `Forwarded` (RFC 7239 `for=`)
 * or `X-Forwarded-For` header, read right to left; a request that carries
 * both headers is taken at its peer (a client could have sent the one the
 * proxy does not set). Addresses are compared and reported canonically
 * (`::ffff:10.0.0.1` is `10.0.0.1`).
 *
 * @example
 * ```ts
 * import { TrustedProxies } from "./_trusted_proxy.ts";
 * import assert from "node:assert/strict";
 * const proxies = new TrustedProxies(["10.0.0.0/8", "fd00::/8"]);
 * const headers = new Headers({ "x-forwarded-for": "203.0.113.7, 10.1.2.3" });
 * assert.equal(proxies.clientOf(headers, "10.0.0.1"), "203.0.113.7");
 * assert.equal(proxies.clientOf(headers, "::ffff:10.0.0.1"), "203.0.113.7");
 * assert.equal(proxies.clientOf(headers, "198.51.100.1"), "198.51.100.1"); // not a proxy
 * const forwarded = new Headers({ forwarded: 'for="[2001:db8::1]:4711";proto=https' });
 * assert.equal(proxies.clientOf(forwarded, "fd00::2"), "2001:db8::1");
 * ```
 */
export class TrustedProxies {
  readonly #cidrs: readonly Cidr[];
  #lastPeer: string | undefined;
  #lastPeerTrusted = false;
  #warned = false;

  /**
   * Parses the CIDRs.
   *
   * @param cidrs IPv4 or IPv6 CIDRs (an address alone is a network of one).
   * @throws A `RangeError` for one that is not a CIDR.
   */
  constructor(cidrs: readonly string[]) {
    this.#cidrs = cidrs.map(parseCidr);
  }

  /**
   * Whether an address is one of the trusted proxies.
   *
   * @param address An IPv4 or IPv6 address (bracketed or not).
   * @returns `true` when a CIDR contains it.
   *
   * @example
   * ```ts
   * import { TrustedProxies } from "./_trusted_proxy.ts";
   * import assert from "node:assert/strict";
   * const proxies = new TrustedProxies(["192.168.0.0/16", "::1"]);
   * assert.equal(proxies.trusts("192.168.4.4"), true);
   * assert.equal(proxies.trusts("::ffff:192.168.4.4"), true);
   * assert.equal(proxies.trusts("[::1]"), true);
   * assert.equal(proxies.trusts("192.169.0.1"), false);
   * ```
   */
  trusts(address: string): boolean {
    const bytes = addressBytes(nodeOf(address));
    return bytes !== undefined && this.#cidrs.some((cidr) => contains(cidr, bytes));
  }

  /**
   * The client of a request that reached this server from `peer`: the peer
   * itself unless it is trusted, else the nearest hop of the forwarded
   * header that is not a trusted proxy (or the farthest one, when every hop
   * is trusted). A hop that is not an address (`unknown`, an obfuscated
   * `_name`) is the client as named.
   *
   * @param headers The request's headers.
   * @param peer The direct peer's address.
   * @returns The client's key: a canonical address, or the hop's name.
   *
   * @example
   * ```ts
   * import { TrustedProxies } from "./_trusted_proxy.ts";
   * import assert from "node:assert/strict";
   * const proxies = new TrustedProxies(["127.0.0.1"]);
   * const spoofed = new Headers({ "x-forwarded-for": "1.1.1.1, 127.0.0.1, 9.9.9.9" });
   * assert.equal(proxies.clientOf(spoofed, "127.0.0.1"), "9.9.9.9"); // 1.1.1.1 is the client's claim
   * assert.equal(proxies.clientOf(new Headers(), "127.0.0.1"), "127.0.0.1");
   * ```
   */
  clientOf(headers: Headers, peer: string): string {
    if (peer !== this.#lastPeer) {
      // Behind a proxy the peer is nearly always the same: its verdict is kept.
      this.#lastPeer = peer;
      this.#lastPeerTrusted = this.trusts(peer);
    }
    const direct = canonicalPeer(peer);
    if (!this.#lastPeerTrusted) return direct;
    const forwarded = headers.get("forwarded");
    const xff = headers.get("x-forwarded-for");
    if (forwarded !== null && xff !== null) {
      if (!this.#warned) {
        this.#warned = true;
        logger.warn(
          "proxy.ambiguous",
          "a request from a trusted proxy carried both Forwarded and X-Forwarded-For; " +
            "neither is trusted, the proxy's address counts as the client (have the proxy " +
            "set one and drop the other)",
          { peer },
        );
      }
      return direct;
    }
    const hops = forwarded !== null
      ? forwardedFor(forwarded)
      : xff !== null
      ? xff.split(",").map(nodeOf)
      : [];
    let client = direct;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i];
      if (hop === "") break;
      const hopBytes = addressBytes(hop);
      if (hopBytes === undefined) return hop.toLowerCase();
      client = addressText(hopBytes);
      if (!this.#cidrs.some((cidr) => contains(cidr, hopBytes))) break;
    }
    return client;
  }
}
