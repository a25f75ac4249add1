/**
 * Adapters, feature plugins and store/queue backends are loaded by package name (D3), so an
 * integrator publishes an OPCO adapter as its own package and names it in the config.
 */
import { kernelError } from './kernel-errors.js';

const BUNDLED: Record<'adapter' | 'plugin', (name: string) => string> = {
  adapter: (name) => `@opco-proxy/adapter-${name}`,
  plugin: (name) => `@opco-proxy/plugin-${name}`,
};

/** Short names (`common-api`, `cache`) map to bundled packages; anything else is a package name. */
export function packageName(kind: 'adapter' | 'plugin', name: string): string {
  return name.startsWith('@') || name.includes('/') ? name : BUNDLED[kind](name);
}

export async function loadModule<T>(kind: 'adapter' | 'plugin', name: string, configKey: string): Promise<T> {
  const pkg = packageName(kind, name);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pkg)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes(pkg)) {
      throw kernelError('OPCO_ERR_PACKAGE_MISSING', { key: configKey, kind, package: pkg });
    }
    throw err;
  }
  return (mod.default ?? mod) as T;
}
