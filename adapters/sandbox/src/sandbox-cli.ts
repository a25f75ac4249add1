/**
 * `opco-proxy-sandbox [--shape common|classic] [--port N] [--seed N]`: the simulated upstream on
 * its own, for an adapter being written to be served against before the real upstream (the
 * service's demo mode runs it in-process instead). Prints its base and token URLs.
 */
import { parseArgs } from 'node:util';
import { startSandbox } from './server/sandbox-server.js';

const USAGE = 'usage: opco-proxy-sandbox [--shape common|classic] [--port N] [--seed N]';

const { values } = parseArgs({
  options: {
    shape: { type: 'string', default: 'common' },
    port: { type: 'string', default: '9090' },
    seed: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const shape = values.shape;
const port = Number(values.port);
if ((shape !== 'common' && shape !== 'classic') || !Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`opco-proxy-sandbox: ${USAGE}`);
  process.exit(2);
}
const sandbox = await startSandbox({ shape, port, seed: values.seed === undefined ? undefined : Number(values.seed) });
console.log(`opco-proxy-sandbox (${shape} shape) listening on ${sandbox.url}\ntoken endpoint ${sandbox.tokenUrl}`);
const stop = () => void sandbox.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
