#!/usr/bin/env node
/**
 * Operators' scripts start `node core/dist/src/cli.js serve|api|worker|hub`: the command now lives
 * in the application package (`@opco-proxy/server`, bin `opco-proxy`), which depends on core and
 * not the other way round, so this forwards to it by name at run time.
 */
const application = '@opco-proxy/server/cli';
await import(application);
