import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { systemResolver, type HostResolver, type ResolvedAddress } from '@opco-proxy/core';
import { forbiddenAddressReason, type Mode } from './address-ranges.js';

export { forbiddenAddressReason, type Mode } from './address-ranges.js';

/** A callback URL, or the address it leads to, may not be used. `code` lets the delivery log tell it from network errors. */
export class CallbackUrlError extends Error {
  readonly code = 'ESSRF';

  constructor(reason: string) {
    super(`callbackUrl: ${reason}`);
    this.name = 'CallbackUrlError';
  }
}

// A trailing dot names the same host for the resolver, so 'localhost.' must not slip past.
function canonicalName(hostname: string): string {
  return hostname.toLowerCase().replace(/\.+$/, '');
}

function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

function hostNameReason(hostname: string, mode: Mode): string | null {
  const name = canonicalName(hostname);
  if (isLoopbackName(name)) return mode === 'development' ? null : 'is a loopback name';
  if (name.endsWith('.local')) return 'ends in .local (a local-network name)';
  if (name.endsWith('.internal')) return 'ends in .internal (a private-network name)';
  // The resolver completes a single label with the host's search domains (cluster or office
  // names), so it can only ever designate something inside our own network.
  if (!name.includes('.')) return 'is a single-label name, not a public domain';
  return null;
}

/** The IP literal a host designates, unbracketed, or null when it is a name to resolve. */
function ipLiteral(hostname: string): string | null {
  if (hostname.startsWith('[')) return hostname.slice(1, -1);
  if (isIP(hostname) !== 0) return hostname;
  // WHATWG URL already rewrites 0177.1, 0x7f.1 or 2130706433 to dotted decimal, but
  // getaddrinfo would also read them as addresses, so a name reaching us raw (node's lookup
  // hook) gets the same treatment.
  if (ipaddr.IPv4.isValid(hostname)) return ipaddr.IPv4.parse(hostname).toString();
  return null;
}

function assertHostAllowed(hostname: string, mode: Mode): void {
  const literal = ipLiteral(hostname);
  if (literal !== null) {
    const reason = forbiddenAddressReason(literal, mode);
    if (reason !== null) throw new CallbackUrlError(`target ${literal} is ${reason}`);
    return;
  }
  const reason = hostNameReason(hostname, mode);
  if (reason !== null) throw new CallbackUrlError(`host ${hostname} ${reason}`);
}

/** Static checks, no DNS: parses with WHATWG URL, requires https (http allowed in development), no credentials in the URL, rejects forbidden host names and forbidden IP literals. Returns the parsed URL. */
export function checkCallbackUrl(raw: string, mode: Mode): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CallbackUrlError('not a valid absolute URL');
  }
  // The scheme is checked first: WHATWG URL only normalizes hosts (decimal, octal, hex IPv4)
  // for special schemes, and everything below relies on that normalization.
  if (url.protocol !== 'https:' && !(mode === 'development' && url.protocol === 'http:')) {
    throw new CallbackUrlError(mode === 'development' ? 'http or https is required' : 'https is required');
  }
  if (url.username !== '' || url.password !== '') {
    throw new CallbackUrlError('credentials in the URL are not allowed');
  }
  assertHostAllowed(url.hostname, mode);
  return url;
}

/**
 * Resolves a host and fails if any of its addresses is forbidden: a name with one private
 * record among public ones is refused rather than filtered, so every later resolution of it
 * faces the same rule. Resolver errors pass through untouched.
 */
async function resolveChecked(hostname: string, mode: Mode, resolver: HostResolver): Promise<ResolvedAddress[]> {
  assertHostAllowed(hostname, mode);
  const literal = ipLiteral(hostname);
  if (literal !== null) return [{ address: literal, family: isIP(literal) === 6 ? 6 : 4 }];

  const answers = await resolver(hostname);
  const checked: ResolvedAddress[] = [];
  for (const { address } of answers) {
    const reason = forbiddenAddressReason(address, mode);
    if (reason !== null) throw new CallbackUrlError(`host ${hostname} resolves to ${address}, ${reason}`);
    // The family is taken from the address, not from the resolver's word, since node connects
    // with the family it is handed.
    checked.push({ address, family: isIP(address) === 6 ? 6 : 4 });
  }
  return checked;
}

/** Registration: static checks, then resolves the host and rejects if ANY resolved address is forbidden (or it does not resolve). */
export async function assertCallbackTarget(
  raw: string,
  mode: Mode,
  resolver: HostResolver = systemResolver,
): Promise<URL> {
  const url = checkCallbackUrl(raw, mode);
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolveChecked(url.hostname, mode, resolver);
  } catch (err) {
    if (err instanceof CallbackUrlError) throw err;
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    throw new CallbackUrlError(`host ${url.hostname} does not resolve${code ? ` (${code})` : ''}`);
  }
  if (addresses.length === 0) throw new CallbackUrlError(`host ${url.hostname} does not resolve`);
  return url;
}

type LookupCallback = Parameters<LookupFunction>[2];

function notFound(hostname: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  err.code = 'ENOTFOUND';
  err.syscall = 'getaddrinfo';
  return err;
}

function wantedFamily(family: LookupOptions['family']): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

/** A lookup function for node's http `lookup` option (node's net `lookup` signature, supporting options.all): resolves with `resolver`, checks every address, and hands node ONLY checked addresses — so the address connected to is the address checked (no DNS-rebinding window). Errors carry code 'ESSRF'. */
export function guardedLookup(mode: Mode, resolver: HostResolver = systemResolver): LookupFunction {
  function lookup(
    hostname: string,
    optionsOrCallback: LookupOptions | LookupCallback,
    maybeCallback?: LookupCallback,
  ): void {
    const options = typeof optionsOrCallback === 'function' ? {} : optionsOrCallback;
    const callback = (typeof optionsOrCallback === 'function' ? optionsOrCallback : maybeCallback) as LookupCallback;
    const family = wantedFamily(options.family);

    // The callback runs outside the promise chain: an exception thrown by node inside it must
    // not come back here as a rejection and make us call it a second time.
    const answer = (err: NodeJS.ErrnoException | null, addresses: ResolvedAddress[] = []) =>
      process.nextTick(() => {
        if (err) return callback(err, options.all ? [] : '');
        if (options.all)
          return callback(
            null,
            addresses.map((a): LookupAddress => ({ address: a.address, family: a.family })),
          );
        return callback(null, addresses[0].address, addresses[0].family);
      });

    resolveChecked(hostname, mode, resolver).then(
      (checked) => {
        const usable = family === 0 ? checked : checked.filter((a) => a.family === family);
        if (usable.length === 0) answer(notFound(hostname));
        else answer(null, usable);
      },
      (err: NodeJS.ErrnoException) => answer(err),
    );
  }
  return lookup;
}
