/**
 * How host names become addresses, one type for every caller: the kernel hands its resolver to
 * plugins (`PluginApi.resolveHost`), and the webhooks' SSRF guard checks each address it gives.
 * Tests inject their own to point names at loopback.
 */
import { lookup } from 'node:dns/promises';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * getaddrinfo, as node's own connections use, so /etc/hosts is honoured the same way it would be
 * when connecting; every address, in the resolver's order.
 */
export const systemResolver: HostResolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
};
