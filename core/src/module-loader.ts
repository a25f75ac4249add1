/**
 * Adapters and feature plugins are packages named in the config (D3), so an integrator publishes
 * an OPCO adapter as its own package and names it there. The application hands the kernel the
 * packages it bundles (`Bundled`, imported like any dependency); a name it does not bundle is
 * imported by package name.
 */
import { kernelError } from './kernel-errors.js';
import type { Drivers } from './drivers.js';

export type ModuleKind = 'adapter' | 'plugin';

/**
 * What the application ships: its store and queue drivers, and its plugins and adapters by
 * package name (`@opco-proxy/plugin-cache`), each as its `import()`: loaded when the config names it.
 */
export interface Bundled extends Drivers {
  plugins?: Record<string, () => Promise<unknown>>;
  adapters?: Record<string, () => Promise<unknown>>;
}

const SHORT_NAME: Record<ModuleKind, (name: string) => string> = {
  adapter: (name) => `@opco-proxy/adapter-${name}`,
  plugin: (name) => `@opco-proxy/plugin-${name}`,
};

/** Short names (`common-api`, `cache`) map to this project's packages; anything else is a package name. */
export function packageName(kind: ModuleKind, name: string): string {
  return name.startsWith('@') || name.includes('/') ? name : SHORT_NAME[kind](name);
}

export async function loadModule<T>(kind: ModuleKind, name: string, configKey: string, bundled: Bundled = {}): Promise<T> {
  const pkg = packageName(kind, name);
  const table = (kind === 'plugin' ? bundled.plugins : bundled.adapters) ?? {};
  let mod: Record<string, unknown>;
  if (Object.hasOwn(table, pkg)) {
    mod = (await table[pkg]()) as Record<string, unknown>;
  } else {
    try {
      mod = (await import(pkg)) as Record<string, unknown>;
    } catch (err) {
      if (isMissing(err, pkg)) {
        throw kernelError('OPCO_ERR_PACKAGE_MISSING', { key: configKey, kind, package: pkg });
      }
      throw err;
    }
  }
  return (mod.default ?? mod) as T;
}

/**
 * The package itself is not installed (not one it imports). Node says so with ERR_MODULE_NOT_FOUND;
 * a module loader hook in front of Node's (a test runner's, an APM agent's) may rethrow the error
 * without its code, so its message is read too.
 */
function isMissing(err: unknown, pkg: string): boolean {
  const { code, message } = err as { code?: string; message?: unknown };
  const text = String(message);
  if (!text.includes(`'${pkg}'`) && !text.includes(`"${pkg}"`)) return false;
  return code === 'ERR_MODULE_NOT_FOUND' || /^Cannot find (package|module) /.test(text);
}
