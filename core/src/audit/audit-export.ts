/**
 * `opco-proxy audit export` (D32): the audit records of a period as JSON Lines, oldest first,
 * read from the store the config names, without a running service. What an operator hands an
 * auditor: `opco-proxy audit export --config FILE --since 2026-01-01 > audit.jsonl`.
 */
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import { checkConfig, ConfigError, describeConfigErrors, readConfigFile } from '../config/config.js';
import { openStore } from '../host/drivers.js';
import type { Bundled } from '../host/module-loader.js';
import type { ConfigParts } from '../config/config-sections.js';
import { systemClock } from '../clock.js';
import { AuditLog, type AuditFilter } from './audit-log.js';

export interface AuditExportOptions {
  config?: string;
  since?: string;
  until?: string;
  tenant?: string;
  action?: string;
}

/** Writes every record of the filter to `out`, one JSON object a line; resolves with the count. */
export async function exportAudit(
  options: AuditExportOptions,
  out: Writable,
  env: NodeJS.ProcessEnv = process.env,
  application: { bundled?: Bundled; parts?: ConfigParts } = {},
): Promise<number> {
  if (!options.config)
    throw new ConfigError('audit export reads the store of a config file: --config FILE (or OPCO_PROXY_CONFIG)');
  const checked = checkConfig(readConfigFile(options.config), env, {}, application.parts);
  if (!checked.config || checked.errors.length > 0) throw new ConfigError(describeConfigErrors(checked.errors));
  if (checked.config.store.type === 'embedded' && !checked.config.store.path) {
    throw new ConfigError(
      'invalid configuration: store: an embedded store in memory lives in its process only; export from a store with a path, or from MongoDB',
    );
  }
  const filter: AuditFilter = { since: instant(options.since, 'since'), until: instant(options.until, 'until') };
  if (options.tenant !== undefined) {
    if (!/^[0-9a-f]{64}$/.test(options.tenant))
      throw new ConfigError('--tenant: a tenant hash, 64 lowercase hex characters');
    filter.tenant = options.tenant;
  }
  if (options.action !== undefined) filter.action = options.action;
  const store = await openStore(checked.config.store, application.bundled ?? {}, { clock: systemClock });
  let count = 0;
  try {
    for await (const record of new AuditLog(store, systemClock).all(filter)) {
      if (!out.write(`${JSON.stringify(record)}\n`)) await once(out, 'drain');
      count += 1;
    }
  } finally {
    await store.close();
  }
  return count;
}

function instant(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new ConfigError(`--${name}: not a date or ISO 8601 timestamp: ${value}`);
  return date.toISOString();
}
