import assert from "node:assert/strict";
import { TrustedProxies } from "./_trusted_proxy.ts";

const xff = (value: string) => new Headers({ "x-forwarded-for": value });
const fwd = (value: string) => new Headers({ forwarded: value });

Deno.test("trusted proxies: CIDRs of both families, mapped addresses, bad CIDRs refused", () => {
  const proxies = new TrustedProxies(["10.0.0.0/8", "172.16.0.0/12", "2001:db8::/32", "::1"]);
  assert.equal(proxies.trusts("10.255.255.255"), true);
  assert.equal(proxies.trusts("11.0.0.0"), false);
  assert.equal(proxies.trusts("172.31.0.1"), true);
  assert.equal(proxies.trusts("172.32.0.1"), false);
  assert.equal(proxies.trusts("::ffff:10.1.1.1"), true);
  assert.equal(proxies.trusts("2001:db8:ffff::1"), true);
  assert.equal(proxies.trusts("2001:db9::1"), false);
  assert.equal(proxies.trusts("::1"), true);
  assert.equal(proxies.trusts("::2"), false);
  assert.equal(proxies.trusts("not an address"), false);
  assert.equal(new TrustedProxies(["::ffff:10.0.0.0/104"]).trusts("10.9.9.9"), true);
  assert.equal(new TrustedProxies(["0.0.0.0/0"]).trusts("8.8.8.8"), true);
  assert.equal(new TrustedProxies(["0.0.0.0/0"]).trusts("::8"), false);
  for (const bad of ["10.0.0.0/33", "10.0.0", "1::2::3", "::/129", "fe80::/x", "256.0.0.1"]) {
    assert.throws(() => new TrustedProxies([bad]), RangeError, bad);
  }
});

Deno.test("trusted proxies: the hops are walked right to left past trusted ones", () => {
  const proxies = new TrustedProxies(["127.0.0.1", "10.0.0.0/8"]);
  // Untrusted peer: headers ignored.
  assert.equal(proxies.clientOf(xff("1.2.3.4"), "203.0.113.9"), "203.0.113.9");
  assert.equal(proxies.clientOf(fwd("for=1.2.3.4"), "::ffff:203.0.113.9"), "203.0.113.9");
  // Trusted peer: the nearest untrusted hop, whatever the client prepended.
  assert.equal(proxies.clientOf(xff("6.6.6.6, 5.5.5.5, 10.0.0.2"), "127.0.0.1"), "5.5.5.5");
  assert.equal(proxies.clientOf(xff("5.5.5.5:1234"), "127.0.0.1"), "5.5.5.5");
  assert.equal(proxies.clientOf(xff("[2001:DB8::0:1]:80"), "127.0.0.1"), "2001:db8::1");
  assert.equal(proxies.clientOf(xff("::ffff:5.5.5.5"), "127.0.0.1"), "5.5.5.5");
  // Every hop trusted: the farthest.
  assert.equal(proxies.clientOf(xff("10.0.0.3, 10.0.0.2"), "127.0.0.1"), "10.0.0.3");
  // No header: the proxy itself.
  assert.equal(proxies.clientOf(new Headers(), "127.0.0.1"), "127.0.0.1");
  // RFC 7239, several elements and headers, quoted values, other parameters.
  assert.equal(
    proxies.clientOf(
      fwd('for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https, For=10.1.1.1;by=10.0.0.1'),
      "127.0.0.1",
    ),
    "2001:db8:cafe::17",
  );
  assert.equal(proxies.clientOf(fwd('for=unknown;by="a,b"'), "127.0.0.1"), "unknown");
  assert.equal(proxies.clientOf(fwd("for=_hidden"), "127.0.0.1"), "_hidden");
  // An element without for= ends the walk at the last trusted hop.
  assert.equal(proxies.clientOf(fwd("for=6.6.6.6, proto=http"), "127.0.0.1"), "127.0.0.1");
  // Both headers: neither trusted.
  const both = new Headers({ forwarded: "for=1.1.1.1", "x-forwarded-for": "2.2.2.2" });
  assert.equal(proxies.clientOf(both, "127.0.0.1"), "127.0.0.1");
});
