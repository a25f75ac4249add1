/**
 * Adapters and feature plugins are packages named in the config (D3), so an integrator publishes
 * an OPCO adapter as its own package and names it there. The application hands the kernel the
 * packages it bundles (`Bundled`, imported like any dependency) and the directories an operator
 * installs packages in; a name it does not bundle is looked up there (docs/adapters.md, "Where
 * the service finds a package").
 */
import { isAbsolute, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { resolve as resolveFrom } from 'import-meta-resolve';
import { kernelError } from '../errors/kernel-errors.js';
import type { Drivers } from './drivers.js';

export type ModuleKind = 'adapter' | 'plugin';

/**
 * What the application ships: its store and queue drivers, and its plugins and adapters by
 * package name (`@opco-proxy/plugin-cache`), each as its `import()`: loaded when the config names it.
 */
export interface Bundled extends Drivers {
  plugins?: Record<string, () => Promise<unknown>>;
  adapters?: Record<string, () => Promise<unknown>>;
  /**
   * Where an operator installs the packages the application does not bundle, looked in first to
   * last (the config file's directory, then the working directory); a relative path in the config
   * is read from the first. The service's own installation is looked in after them.
   */
  lookupDirs?: string[];
}

const SHORT_NAME: Record<ModuleKind, (name: string) => string> = {
  adapter: (name) => `@opco-proxy/adapter-${name}`,
  plugin: (name) => `@opco-proxy/plugin-${name}`,
};

/** Short names (`common-api`, `cache`) map to this project's packages; anything else is a package name or a path. */
export function packageName(kind: ModuleKind, name: string): string {
  return name.startsWith('@') || name.includes('/') ? name : SHORT_NAME[kind](name);
}

export async function loadModule<T>(
  kind: ModuleKind,
  name: string,
  configKey: string,
  bundled: Bundled = {},
): Promise<T> {
  const pkg = packageName(kind, name);
  const table = (kind === 'plugin' ? bundled.plugins : bundled.adapters) ?? {};
  const mod = (
    Object.hasOwn(table, pkg) ? await table[pkg]() : await importInstalled(pkg, bundled.lookupDirs ?? [])
  ) as Record<string, unknown> | undefined;
  if (mod === undefined) {
    const places = [...(bundled.lookupDirs ?? []), "the service's own installation"].join(', ');
    throw kernelError('OPCO_ERR_PACKAGE_MISSING', { key: configKey, kind, package: pkg, places });
  }
  return (mod.default ?? mod) as T;
}

/**
 * A path (`./my-adapter.mjs`, relative to the first lookup directory) is imported as a file; a
 * package name from the first lookup directory that has it installed, else from where this kernel
 * is installed. Undefined when no place has it.
 */
async function importInstalled(pkg: string, lookupDirs: string[]): Promise<unknown> {
  if (pkg.startsWith('./') || pkg.startsWith('../') || isAbsolute(pkg)) {
    return importOr(pathToFileURL(resolvePath(lookupDirs[0] ?? process.cwd(), pkg)).href, pkg);
  }
  for (const dir of lookupDirs) {
    const url = resolvedFrom(pkg, dir);
    if (url !== undefined) return import(url);
  }
  return importOr(pkg, pkg);
}

/** The package's entry as Node would resolve `import(pkg)` from a module in `dir`. */
function resolvedFrom(pkg: string, dir: string): string | undefined {
  try {
    return resolveFrom(pkg, pathToFileURL(resolvePath(dir, 'package.json')).href);
  } catch (err) {
    if (isMissing(err, pkg)) return undefined;
    throw err;
  }
}

async function importOr(specifier: string, pkg: string): Promise<unknown> {
  try {
    return await import(specifier);
  } catch (err) {
    if (isMissing(err, pkg) || isMissing(err, specifier)) return undefined;
    throw err;
  }
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
