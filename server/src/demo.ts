/**
 * Demo mode (D1): simulated upstreams run in this process, so a newcomer can curl the service at
 * once: the common API (SPEC 4.16, every route supported) under opcoId `sandbox`, and the classic
 * API family through its own adapter under opcoId `classic`, to show that one service speaks to
 * OPCOs whose APIs differ in every way.
 */
import type { Config, OpcoConfig } from '@opco-proxy/core/application';
// Loaded by demo mode only: the simulated upstreams (and the JWT library their hub check uses)
// are not what a production process should hold in memory (issue 40 point 5).
type Sandbox = Awaited<ReturnType<(typeof import('@opco-proxy/adapter-sandbox'))['startSandbox']>>;

/** The one secret both simulated upstreams accept (any secret but `wrong-secret` is). */
const SECRET_ENV = 'OPCO_PROXY_SANDBOX_SECRET';

export async function startDemoUpstream(): Promise<{
  config: Partial<Config>;
  env: Record<string, string>;
  close(): Promise<void>;
}> {
  const { startSandbox } = await import('@opco-proxy/adapter-sandbox');
  const common = await startSandbox();
  const classic = await startSandbox({ shape: 'classic' }).catch(async (err: unknown) => {
    await common.close();
    throw err;
  });
  const entry = (adapter: string, sandbox: Sandbox): OpcoConfig => ({
    adapter,
    baseUrl: sandbox.url,
    tokenUrl: sandbox.tokenUrl,
    clientId: 'demo-client',
    clientSecretEnv: SECRET_ENV,
  });
  return {
    config: {
      mode: 'development',
      // Demo mode takes any key and lets webhooks target loopback: never reachable from the network.
      host: '127.0.0.1',
      store: { type: 'embedded' },
      queue: { type: 'embedded' },
      opcos: { sandbox: entry('sandbox', common), classic: entry('classic-api', classic) },
    },
    env: { [SECRET_ENV]: process.env[SECRET_ENV] ?? 'demo-secret' },
    async close() {
      await Promise.all([common.close(), classic.close()]);
    },
  };
}
