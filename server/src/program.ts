/**
 * The `opco-proxy` command (D1, D2, D4): the process roles, `config check`, `new-adapter`.
 * Settings come from defaults < the config file < the environment < these flags
 * (docs/configuration.md). A ConfigError ends the process with its message and exit 1, never a
 * stack trace.
 */
import { Command, Option } from 'commander';
import { ConfigError, SERVICE_VERSION } from '@opco-proxy/core';
import { exportAudit, type AuditExportOptions } from '@opco-proxy/core/application';
import { writeStarter } from '@opco-proxy/adapter-kit';
import { runHubRole, runRole, type RoleOptions } from './process-roles.js';
import { checkConfigFile } from './config-check.js';
import { applicationModules } from './bundle.js';
import { CONFIG_PARTS } from './config-parts.js';

const CONFIG_HELP = 'JSON config file (docs/configuration.md); without one, demo mode';
const HUB_CONFIG_HELP = 'JSON hub config file (docs/hub.md)';

/** The flags every role shares: the config file and the keys operators override most. */
function roleCommand(
  program: Command,
  name: string,
  summary: string,
  keys: Array<'port' | 'host' | 'logLevel'>,
): Command {
  const configHelp = name === 'hub' ? HUB_CONFIG_HELP : CONFIG_HELP;
  const command = program
    .command(name)
    .description(summary)
    .addOption(new Option('-c, --config <file>', configHelp).env('OPCO_PROXY_CONFIG'));
  if (keys.includes('port')) command.option('-p, --port <port>', 'listen on this port (wins over PORT and the file)');
  if (keys.includes('host')) command.option('--host <address>', 'listen on this address (wins over HOST and the file)');
  if (keys.includes('logLevel'))
    command.option(
      '--log-level <level>',
      'fatal, error, warn, info, debug, trace or silent (wins over LOG_LEVEL and the file)',
    );
  return command;
}

function buildProgram(): Command {
  const program = new Command('opco-proxy')
    .description("One clean REST API in front of the OPCO funding bodies' upstream APIs.")
    .version(SERVICE_VERSION, '-v, --version', 'print the version')
    .helpCommand('help [command]', 'show help for a command')
    .showHelpAfterError('(run opco-proxy help for the commands)')
    .addHelpText(
      'after',
      `
Environment (docs/configuration.md):
  OPCO_PROXY_CONFIG      the config file, as --config
  OPCO_PROXY_MASTER_KEY  64 hex characters, required outside demo mode
  OPCO_PROXY_ADMIN_KEY   operator key of /console and /admin (at least 32 characters)
  PORT, HOST, LOG_LEVEL, OPCO_PROXY_STORE_URL, OPCO_PROXY_QUEUE_URL  override their config keys
  OPCO_PROXY__<key>__<key>=<JSON or text>  overrides any config key (OPCO_PROXY__jobs__leaseMs=5000)
Precedence: defaults < config file < environment < command-line flags.`,
    );

  const roles = [
    [
      'serve',
      'run everything in one process: HTTP API, workers, pollers (the default command)',
      ['port', 'host', 'logLevel'],
    ],
    [
      'api',
      'run the HTTP API only; workers run elsewhere on the same MongoDB and RabbitMQ',
      ['port', 'host', 'logLevel'],
    ],
    ['worker', 'run the background work only (jobs, webhook deliveries, syncs, pollers), no HTTP', ['logLevel']],
  ] as const;
  for (const [role, summary, keys] of roles) {
    roleCommand(program, role, summary, [...keys]).action((options: RoleOptions) => runRole(role, options));
  }

  // Demo mode whatever OPCO_PROXY_CONFIG says: the image sets it, and a newcomer's first
  // `docker run -p 8080:8080 IMAGE demo` has no config to mount yet.
  program
    .command('demo')
    .description('run `serve` in demo mode (D1): a built-in sandbox upstream, any API key, no config file read')
    .option('-p, --port <port>', 'listen on this port (wins over PORT; default 8080)')
    .option('--host <address>', 'listen on this address (wins over HOST; default 127.0.0.1, 0.0.0.0 in the image)')
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (wins over LOG_LEVEL)')
    .action((options: RoleOptions) => runRole('serve', { ...options, config: undefined }));

  roleCommand(
    program,
    'hub',
    'run the rate-limit coordinator of several instances (docs/hub.md); needs a hub config file',
    ['port', 'host', 'logLevel'],
  ).action((options: RoleOptions) => runHubRole(options));

  const config = program.command('config').description('work with config files');
  config
    .command('check')
    .description(
      "check a config file as start-up would (with this environment's overrides); exit 1 listing every problem",
    )
    .argument('<file>', 'the JSON config file')
    .action(checkConfig);

  program
    .command('audit')
    .description('work with the audit records of a deployment (D32)')
    .command('export')
    .description('print the audit records of a period as JSON Lines, oldest first, read from the store of the config')
    .addOption(
      new Option('-c, --config <file>', "the service's JSON config file (its store is read)").env('OPCO_PROXY_CONFIG'),
    )
    .option('--since <date>', 'records at or after this date or ISO 8601 timestamp')
    .option('--until <date>', 'records before this date or ISO 8601 timestamp')
    .option('--tenant <hash>', "only this tenant's records (the SHA-256 of its X-API-KEY)")
    .option('--action <operationId>', 'only this action, e.g. postDossier')
    .action(exportAuditRecords);

  program
    .command('new-adapter')
    .description(
      "write a new OPCO adapter package (profile skeleton, fixtures, conformance test) with the adapter kit's starter",
    )
    .argument('<name>', 'an npm package name, e.g. @acme/opco-proxy-adapter-acme or opco-acme')
    .option('--dir <dir>', 'where to write it (default adapters/<id> in a clone of opco-proxy, else ./<id>)')
    .action(newAdapter);
  return program;
}

async function checkConfig(file: string): Promise<void> {
  const report = await checkConfigFile(file);
  for (const warning of report.warnings) console.log(`warning: ${warning}`);
  if (report.errors.length > 0) {
    console.error(`${file}: ${report.errors.length} ${report.errors.length === 1 ? 'problem' : 'problems'}`);
    for (const error of report.errors) console.error(`  ${error}`);
    process.exitCode = 1;
    return;
  }
  console.log(`${file}: valid\n${report.summary.map((line) => `  ${line}`).join('\n')}`);
}

async function exportAuditRecords(options: AuditExportOptions): Promise<void> {
  const count = await exportAudit(options, process.stdout, process.env, {
    bundled: applicationModules(options.config),
    parts: CONFIG_PARTS,
  });
  console.error(`${count} audit ${count === 1 ? 'record' : 'records'} exported`);
}

/** The adapter kit's starter (issue 12). */
function newAdapter(name: string, options: { dir?: string }): void {
  try {
    console.log(writeStarter(name, options).message);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** `opco-proxy` alone, or with flags only (`opco-proxy --config FILE`), is `opco-proxy serve ...`. */
function withDefaultCommand(args: string[]): string[] {
  const first = args[0];
  const programFlag = first === '-h' || first === '--help' || first === '-v' || first === '--version';
  return first === undefined || (first.startsWith('-') && !programFlag) ? ['serve', ...args] : args;
}

buildProgram()
  .parseAsync(withDefaultCommand(process.argv.slice(2)), { from: 'user' })
  .catch((err: unknown) => {
    if (err instanceof ConfigError) {
      console.error(`opco-proxy: ${err.message}`);
    } else {
      console.error('opco-proxy: failed to start:', err);
    }
    process.exit(1);
  });
