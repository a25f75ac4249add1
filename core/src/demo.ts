/**
 * Demo mode (D1): the sandbox upstream runs in this process under opcoId `sandbox`, with
 * every route supported, so a newcomer can curl the service at once.
 */
import type { Config } from './config.js';

interface SandboxModule {
  startSandbox(options?: { port?: number }): Promise<{ url: string; tokenUrl: string; close(): Promise<void> }>;
}

export async function startDemoUpstream(): Promise<{ config: Partial<Config>; env: Record<string, string>; close(): Promise<void> }> {
  const name = '@opco-proxy/adapter-sandbox'; // loaded by name: core does not build against it
  const { startSandbox } = (await import(name)) as SandboxModule;
  const sandbox = await startSandbox();
  return {
    config: {
      mode: 'development',
      // Demo mode takes any key and lets webhooks target loopback: never reachable from the network.
      host: '127.0.0.1',
      store: { type: 'embedded' },
      queue: { type: 'embedded' },
      opcos: {
        sandbox: {
          adapter: 'sandbox',
          baseUrl: sandbox.url,
          tokenUrl: sandbox.tokenUrl,
          clientId: 'demo-client',
          clientSecretEnv: 'OPCO_PROXY_SANDBOX_SECRET',
        },
      },
    },
    env: { OPCO_PROXY_SANDBOX_SECRET: process.env.OPCO_PROXY_SANDBOX_SECRET ?? 'demo-secret' },
    close: () => sandbox.close(),
  };
}
