#!/usr/bin/env node
// `npm create @opco-proxy/adapter@latest NAME [-- --dir DIR]`: npm installs this package and runs
// this command in the integrator's directory; it writes the adapter package with the kit's starter.
import { runStarterCli } from '@opco-proxy/adapter-kit/starter-cli';

process.exitCode = runStarterCli('npm create @opco-proxy/adapter', process.argv.slice(2));
